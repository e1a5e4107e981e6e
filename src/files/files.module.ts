import { Module } from '@nestjs/common';
import { MongooseModule } from '@nestjs/mongoose';
import { EventsModule } from '../events';
import { FileContents } from './file-contents';
import { FileLinks } from './file-links';
import { FileMoves } from './file-moves';
import { FileLinksController } from './file-links.controller';
import { FileRecordDocument, FileRecordSchema } from './file-record.schema';
import { FileRecordsRepository } from './file-records.repository';
import { FileRestores } from './file-restores';
import { FileSweep } from './file-sweep';
import { FileUploads } from './file-uploads';
import { FilesController } from './files.controller';
import { FilesService } from './files.service';
import { FileQuotaEntryDocument, FileQuotaEntrySchema } from './quota/file-quota-entry.schema';
import { FileQuotaLedger } from './quota/file-quota.ledger';

@Module({
  imports: [
    MongooseModule.forFeature([
      { name: FileRecordDocument.name, schema: FileRecordSchema },
      { name: FileQuotaEntryDocument.name, schema: FileQuotaEntrySchema },
    ]),
    // Uploads and deletions go to the change feed.
    EventsModule,
  ],
  controllers: [FilesController, FileLinksController],
  providers: [
    FileRecordsRepository,
    FileQuotaLedger,
    FileContents,
    FileLinks,
    FileUploads,
    FileRestores,
    FilesService,
    FileSweep,
    FileMoves,
  ],
  exports: [
    FilesService,
    FileUploads,
    FileRestores,
    FileContents,
    FileRecordsRepository,
    FileMoves,
  ],
})
export class FilesModule {}
