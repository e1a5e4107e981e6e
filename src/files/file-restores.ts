import { Injectable } from '@nestjs/common';
import { type CustomerPrincipal } from '../auth';
import { namespaceOfPrincipal } from '../events';
import { isUniqueViolation } from '../common/errors/mongo-errors';
import { FileRecordsRepository, type FileRecord } from './file-records.repository';
import { FileUploads, type KeptFile, type UploadInput } from './file-uploads';
import { FileExistsError, FileIdTakenError, FileNotFoundError } from './files.errors';
import { FilesService } from './files.service';

/** Who holds a file id in a namespace: nobody, a stored file the caller sees (with it), or another. */
export type IdHolder =
  { holder: 'none' } | { holder: 'own'; file: FileRecord } | { holder: 'other' };

/**
 * Files an import restores under the id, time and owner their export gave them, streamed and
 * counted as an upload is (FileUploads). A file id is unique within a namespace, so the same
 * export restores into another namespace, branch or deployment with its ids; within one
 * namespace, an id held by a file the caller does not see (another owner's, an upload or a
 * delete under way) cannot be restored.
 */
@Injectable()
export class FileRestores {
  constructor(
    private readonly records: FileRecordsRepository,
    private readonly uploads: FileUploads,
    private readonly files: FilesService,
  ) {}

  /** Who holds `id` in the caller's namespace, as the caller sees it. */
  async holderOf(principal: CustomerPrincipal, id: string): Promise<IdHolder> {
    try {
      return { holder: 'own', file: await this.files.get(principal, id) };
    } catch (error) {
      if (!(error instanceof FileNotFoundError)) throw error;
    }
    const held = await this.records.findAny(namespaceOfPrincipal(principal), id);
    return held ? { holder: 'other' } : { holder: 'none' };
  }

  /**
   * Stores `input` as file `kept.id`. A file of the caller's under that id is refused
   * (FILE_EXISTS), or, with `replace`, deleted first; any other holder is refused
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
    try {
      const file = await this.uploads.upload(principal, input, kept);
      return { file, replaced: held.holder === 'own' };
    } catch (error) {
      // Another upload of the same id in the namespace began first (the id is unique there).
      if (isUniqueViolation(error)) throw new FileIdTakenError(kept.id);
      throw error;
    }
  }
}
