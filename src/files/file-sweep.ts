import { Inject, Injectable } from '@nestjs/common';
import { BackgroundTasks, type BackgroundTask } from '../common/scheduling/background-tasks';
import type { Tenant } from '../common/tenancy/namespace';
import { APP_CONFIG, type AppConfig } from '../config';
import { FileUploads } from './file-uploads';
import { FilesService } from './files.service';
import { FileRecordsRepository, type FileRecord } from './file-records.repository';
import { FileQuotaLedger } from './quota/file-quota.ledger';

/** Records one sweep looks at per state and run. */
const SWEEP_BATCH = 100;
/**
 * How long the quota steps of a deleted or given-up file are kept: a delete repeated, or an
 * upload's late end, finds its step and is not counted twice within it.
 */
const LEDGER_GRACE_MS = 3_600_000;

function tenantOfFile(file: FileRecord): Tenant {
  return { kind: file.namespace.kind, id: file.namespace.id };
}

/**
 * Every instance, every FILE_SWEEP_MS: finishes what stopped halfway. An upload whose heartbeat
 * is older than FILE_UPLOAD_STALE_MS (its instance died, or it hangs) is given up — its
 * reservation given back, its chunks and record removed — unless it had recorded its end, in
 * which case it is stored. A deletion that stopped is completed. The quota steps of files
 * deleted or given up an hour ago are forgotten (but each tenant's newest). All of it is safe to
 * repeat and to run on several instances at once.
 */
@Injectable()
export class FileSweep {
  readonly task: BackgroundTask;
  private readonly staleMs: number;

  constructor(
    private readonly records: FileRecordsRepository,
    private readonly uploads: FileUploads,
    private readonly files: FilesService,
    private readonly ledger: FileQuotaLedger,
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
    const finished = new Date(Date.now() - LEDGER_GRACE_MS);
    for (const { tenant, file } of await this.ledger.finishedBefore(finished, SWEEP_BATCH)) {
      if (this.task.isStopped) return counts;
      if (!(await this.records.findByKey(file))) await this.ledger.forgetFile(tenant, file);
    }
    return counts;
  }
}
