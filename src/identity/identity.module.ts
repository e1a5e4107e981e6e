import { Module } from '@nestjs/common';
import { MongooseModule } from '@nestjs/mongoose';
import { ProfileModule } from '../profile';
import { IdentityDirectory } from './identity-directory';
import { IdentityLinks } from './identity-links';
import { IdentityRepository } from './identity.repository';
import { IdentityDocument, IdentitySchema } from './identity.schema';
import { TokenIdentities } from './token-identities';

/**
 * Identities of identity providers' users: (issuer, subject) linked to the service's users,
 * provisioned by their first token or linked by the operator. Placement comes from the global
 * PlacementModule.
 */
@Module({
  imports: [
    MongooseModule.forFeature([{ name: IdentityDocument.name, schema: IdentitySchema }]),
    ProfileModule,
  ],
  providers: [IdentityRepository, IdentityDirectory, TokenIdentities, IdentityLinks],
  exports: [TokenIdentities, IdentityLinks],
})
export class IdentityModule {}
