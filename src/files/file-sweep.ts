import { Inject, Injectable } from '@nestjs/common';
import { BackgroundTasks, type BackgroundTask } from '../common/scheduling/background-tasks';
import type { Tenant } from '../common/tenancy/namespace';
import { APP_CONFIG, type AppConfig } from '../config';
import { FileUploads } from './file-uploads';
import { FilesService } from './files.service';
import { FileRecordsRepository, type FileRecord } from './file-records.repository';

/** Records one sweep looks at per state and run. */
const SWEEP_BATCH = 100;

function tenantOfFile(file: FileRecord): Tenant {
  return { kind: file.namespace.kind, id: file.namespace.id };
}

/**
 * Every instance, every FILE_SWEEP_MS: finishes what stopped halfway. An upload whose heartbeat
 * is older than FILE_UPLOAD_STALE_MS (its instance died, or it hangs) is given up — its
 * reservation given back, its chunks and record removed — unless it had recorded its end, in
 * which case it is stored. A deletion that stopped is completed. Both are safe to repeat and to
 * run on several instances at once.
 */
@Injectable()
export class FileSweep {
  readonly task: BackgroundTask;
  private readonly staleMs: number;

  constructor(
    private readonly records: FileRecordsRepository,
    private readonly uploads: FileUploads,
    private readonly files: FilesService,
    tasks: BackgroundTasks,
    @Inject(APP_CONFIG) config: AppConfig,
  ) {
    this.staleMs = config.files.uploadStaleMs;
    this.task = tasks.register({
      name: 'file-sweep',
      intervalMs: config.files.sweepMs,
      run: () => this.sweep(),
    });
  }

  /** One sweep: what it gave up, stored and deleted. */
  async sweep(): Promise<{ abandoned: number; stored: number; deleted: number }> {
    const before = new Date(Date.now() - this.staleMs);
    const counts = { abandoned: 0, stored: 0, deleted: 0 };
    for (const file of await this.records.stale('uploading', before, SWEEP_BATCH)) {
      if (this.task.isStopped) return counts;
      counts[await this.uploads.abandon(tenantOfFile(file), file)] += 1;
    }
    for (const file of await this.records.stale('deleting', before, SWEEP_BATCH)) {
      if (this.task.isStopped) return counts;
      await this.files.erase(tenantOfFile(file), file);
      counts.deleted += 1;
    }
    return counts;
  }
}
