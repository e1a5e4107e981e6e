import { Global, Module } from '@nestjs/common';
import { MongooseModule } from '@nestjs/mongoose';
import { DataModule } from '../data/data.module';
import { EventsModule } from '../events';
import { FilesModule } from '../files';
import { IdentityModule } from '../identity';
import { ACCOUNT_ERASURE, ProfileModule } from '../profile';
import { ProjectModule } from '../project/project.module';
import { TeamModule } from '../team/team.module';
import { WebhooksModule } from '../webhooks/webhooks.module';
import { AccountExport } from './account-export.service';
import { ErasureRepository } from './erasure.repository';
import { ErasureDocument, ErasureSchema } from './erasure.schema';
import { ErasureService } from './erasure.service';
import { TenantMoveRepository } from './tenant-move.repository';
import {
  TenantMoveDocument,
  TenantMoveRunDocument,
  TenantMoveRunSchema,
  TenantMoveSchema,
} from './tenant-move.schema';
import { TenantFeedMove } from './tenant-feed-move';
import { TenantFilesMove } from './tenant-files-move';
import { TenantMoveRunner } from './tenant-move-runner';
import { TenantMoves } from './tenant-moves.service';

/**
 * The end of accounts and teams — erasures that reach into every module holding their data — and
 * tenant moves between clusters, which an erasure waits for; and the account export, which reads
 * what an erasure deletes. No routes of its own: the operator's erasure and export routes are the
 * admin module's, GET /me/export the me module's, DELETE /profile the profile module's, which
 * reaches the erasure through its port (ACCOUNT_ERASURE). Global for that port alone: the profile
 * module cannot import this one, which imports it. ApiKeyService comes from the global AuthModule.
 */

@Global()
@Module({
  imports: [
    MongooseModule.forFeature([
      { name: ErasureDocument.name, schema: ErasureSchema },
      { name: TenantMoveDocument.name, schema: TenantMoveSchema },
      { name: TenantMoveRunDocument.name, schema: TenantMoveRunSchema },
    ]),
    DataModule,
    EventsModule,
    FilesModule,
    IdentityModule,
    ProfileModule,
    ProjectModule,
    TeamModule,
    WebhooksModule,
  ],
  providers: [
    AccountExport,
    ErasureRepository,
    ErasureService,
    TenantMoveRepository,
    TenantFeedMove,
    TenantFilesMove,
    TenantMoveRunner,
    TenantMoves,
    { provide: ACCOUNT_ERASURE, useExisting: ErasureService },
  ],
  exports: [AccountExport, ErasureService, TenantMoves, ACCOUNT_ERASURE],
})
export class LifecycleModule {}
