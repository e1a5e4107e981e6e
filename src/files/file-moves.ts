import { Injectable } from '@nestjs/common';
import type { Tenant } from '../common/tenancy/namespace';
import type { TenantLocation } from '../placement';
import { FileContents } from './file-contents';
import { FileRecordsRepository, type FileRecord } from './file-records.repository';

/** Records a pass of a move reads at a time. */
const MOVE_BATCH = 100;

/** Bytes a move left behind: the file and where its old copy is. */
export interface MovedFileSource {
  file: string;
  cluster: string | null;
  database: string;
}

/** What a move's files pass is told by the move running it. */
export interface FileMoveHooks {
  /**
   * Persists where the bytes of these files are before they are copied, so that the old copies
   * are removed at the end even when the run dies halfway.
   */
  noteSources(sources: MovedFileSource[]): Promise<void>;
  /** Counts a file just moved (the move's progress); throws when the move must stop. */
  moved(): Promise<void>;
  /** Waits a little while uploads at the old location finish; throws when the move must stop. */
  wait(): Promise<void>;
}

function sameLocation(a: FileRecord['location'], b: FileRecord['location']): boolean {
  return a.cluster === b.cluster && a.database === b.database;
}

/**
 * A tenant move's part for files. Files never change once stored, so a file moves by copying
 * its bytes (an upsert, safe to repeat), pointing its record at the copy (idempotent), and
 * removing the old bytes only later (`removeSources`, once no download can still read them).
 */
@Injectable()
export class FileMoves {
  constructor(
    private readonly records: FileRecordsRepository,
    private readonly contents: FileContents,
  ) {}

  /**
   * Moves every stored file of the tenant whose bytes are not at `to`, and waits for uploads
   * still writing elsewhere to end (stored: moved then; given up: gone), until none is left
   * elsewhere. Files being deleted are left to their deletion, which removes their bytes where
   * their record says. Returns how many files this pass moved.
   */
  async moveTenant(tenant: Tenant, to: TenantLocation, hooks: FileMoveHooks): Promise<number> {
    let total = 0;
    for (;;) {
      let uploading = 0;
      let moved = 0;
      let after: string | undefined;
      for (;;) {
        const batch = await this.records.ofTenant(tenant, MOVE_BATCH, after);
        if (batch.length === 0) break;
        after = batch[batch.length - 1]?.id;
        const away = batch.filter((f) => !sameLocation(f.location, to));
        uploading += away.filter((f) => f.state === 'uploading').length;
        const stored = away.filter((f) => f.state === 'stored');
        if (stored.length === 0) continue;
        await hooks.noteSources(stored.map((f) => ({ file: f.id, ...f.location })));
        for (const file of stored) {
          await this.moveFile(file, to);
          await hooks.moved();
          moved += 1;
        }
      }
      total += moved;
      if (uploading === 0 && moved === 0) return total;
      if (uploading > 0) await hooks.wait();
    }
  }

  /** Copies a file's bytes to `to` and points its record there. */
  private async moveFile(file: FileRecord, to: TenantLocation): Promise<void> {
    await this.contents.copy(file.location, to, file.id);
    await this.records.relocate(file.id, to);
    // Deleted meanwhile: its deletion removed the bytes where it read the record, perhaps the
    // old ones; the copy goes too (a deletion still running removes it again, harmlessly).
    const now = await this.records.findByKey(file.id);
    if (!now || now.state === 'deleting') await this.contents.remove(to, file.id);
  }

  /**
   * Removes the old bytes of files moved to `to`, unless a record points at them (nothing
   * should, but bytes a record names are never removed). A file deleted during the move goes at
   * `to` as well: on FerretDB, which writes an update back whole, pointing its record there could
   * have undone the mark of a deletion that then removed only the old bytes. Safe to repeat.
   */
  async removeSources(sources: readonly MovedFileSource[], to: TenantLocation): Promise<void> {
    for (const source of sources) {
      const location = { cluster: source.cluster, database: source.database };
      const file = await this.records.findByKey(source.file);
      if (file && sameLocation(file.location, location)) continue;
      await this.contents.remove(location, source.file);
      if (!file) await this.contents.remove(to, source.file);
    }
  }
}
