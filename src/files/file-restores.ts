import { Injectable } from '@nestjs/common';
import { type CustomerPrincipal } from '../auth';
import { isUniqueViolation } from '../common/errors/mongo-errors';
import { FileRecordsRepository, type FileRecord } from './file-records.repository';
import { FileUploads, type KeptFile, type UploadInput } from './file-uploads';
import { FileExistsError, FileIdTakenError, FileNotFoundError } from './files.errors';
import { FilesService } from './files.service';
import { FileQuotaLedger } from './quota/file-quota.ledger';

/** Who holds a file id: nobody, a stored file the caller sees (with it), or another file. */
export type IdHolder =
  { holder: 'none' } | { holder: 'own'; file: FileRecord } | { holder: 'other' };

/**
 * Files an import restores under the id, time and owner their export gave them, streamed and
 * counted as an upload is (FileUploads). A file id names one file of the service: a record holds
 * it while the file exists, in any namespace, so an id held elsewhere cannot be restored.
 */
@Injectable()
export class FileRestores {
  constructor(
    private readonly records: FileRecordsRepository,
    private readonly ledger: FileQuotaLedger,
    private readonly uploads: FileUploads,
    private readonly files: FilesService,
  ) {}

  /** Who holds `id`, as the caller sees it (a sub key sees its own files only). */
  async holderOf(principal: CustomerPrincipal, id: string): Promise<IdHolder> {
    try {
      return { holder: 'own', file: await this.files.get(principal, id) };
    } catch (error) {
      if (!(error instanceof FileNotFoundError)) throw error;
    }
    return (await this.records.find(id)) ? { holder: 'other' } : { holder: 'none' };
  }

  /**
   * Stores `input` as file `kept.id`. A file of the caller's under that id is refused
   * (FILE_EXISTS), or, with `replace`, deleted first; a file of anyone else's is refused
   * (FILE_ID_TAKEN). Resolves whether a file was replaced. Fails as an upload does, leaving
   * nothing of the new file.
   */
  async restore(
    principal: CustomerPrincipal,
    input: UploadInput,
    kept: KeptFile,
    replace: boolean,
  ): Promise<{ file: FileRecord; replaced: boolean }> {
    const held = await this.holderOf(principal, kept.id);
    if (held.holder === 'other') throw new FileIdTakenError(kept.id);
    if (held.holder === 'own' && !replace) throw new FileExistsError(kept.id);
    if (held.holder === 'own') await this.files.delete(principal, kept.id);
    // Steps of files stored under the id before (a deleted one, an import that failed) would
    // pass for the new file's: they are retired, once no record holds the id. Steps recorded
    // after the second look belong to an upload that holds the id, which this one then cannot.
    const history = await this.ledger.historyOf(kept.id);
    if (await this.records.find(kept.id)) throw new FileIdTakenError(kept.id);
    await this.ledger.retire(kept.id, history);
    try {
      const file = await this.uploads.upload(principal, input, kept);
      return { file, replaced: held.holder === 'own' };
    } catch (error) {
      // Another upload of the same id began first (the record's `_id` is unique).
      if (isUniqueViolation(error)) throw new FileIdTakenError(kept.id);
      throw error;
    }
  }
}
