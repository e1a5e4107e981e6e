import { Module } from '@nestjs/common';
import { TokenIdentities } from './token-identities';

/** Identities of identity providers' users: (issuer, subject) linked to the service's users. */
@Module({
  providers: [TokenIdentities],
  exports: [TokenIdentities],
})
export class IdentityModule {}
