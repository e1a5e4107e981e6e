import { Inject, Injectable } from '@nestjs/common';
import type { Readable } from 'node:stream';
import { Types } from 'mongoose';
import { ownerValueOf, tenantOf, type CustomerPrincipal } from '../auth';
import { DomainError } from '../common/errors';
import type { Tenant } from '../common/tenancy/namespace';
import { APP_CONFIG, type AppConfig } from '../config';
import { changeScopeOf, EventsService, namespaceOfPrincipal } from '../events';
import { TenantPlacements } from '../placement';
import { limitRefusal, TenantLimits } from '../plans';
import { FileContents } from './file-contents';
import { fileChange } from './file-events';
import { FileRecordsRepository, type FileRecord } from './file-records.repository';
import { FileNotFoundError, FileQuotaExceededError, UploadAbandonedError } from './files.errors';
import { FileQuotaLedger, type QuotaEntry } from './quota/file-quota.ledger';

/** What an upload carries besides its bytes. */
export interface UploadInput {
  /** Null: a raw body sent without `name`, named by its id. */
  name: string | null;
  contentType: string;
  body: Readable;
  /** The body's Content-Length (the most the file can be), or null for a chunked body. */
  declaredBytes: number | null;
}

/** What an import keeps of a file it restores: its id, its time and its owner value. */
export interface KeptFile {
  id: string;
  createdAt: Date;
  owner: string;
}

/** How much a chunked upload reserves at a time (less near the quota's end). */
const GROW_STEP_BYTES = 1024 * 1024;

/** The ref of a file's reservations (reserve, grow:<n>): what an end settles. */
function isReservation(ref: string): boolean {
  return /^[0-9a-f]{24}:(reserve|grow:\d+)$/.test(ref);
}

/**
 * Uploads: a record (`uploading`), the quota reserved, the bytes streamed into GridFS, then one
 * end step that counts the file as stored — or, when anything fails, gives everything back.
 *
 * The quota is reserved before the bytes go in: a body with Content-Length reserves that many
 * bytes at once (a multipart body's length is a little more than its file's), so concurrent
 * uploads on any instance never pass the tenant's `fileBytes` (its plan's, else
 * FILE_QUOTA_BYTES; read through TenantLimits as the upload starts) together; a chunked body reserves 1 MiB
 * steps as it arrives. The end records the true size. An upload's end is one ledger step
 * (`<id>:end`) that either the upload (stored) or a sweep (abandoned) records, never both.
 */
@Injectable()
export class FileUploads {
  private readonly config: AppConfig['files'];

  constructor(
    private readonly records: FileRecordsRepository,
    private readonly contents: FileContents,
    private readonly ledger: FileQuotaLedger,
    private readonly limits: TenantLimits,
    private readonly placements: TenantPlacements,
    private readonly events: EventsService,
    @Inject(APP_CONFIG) config: AppConfig,
  ) {
    this.config = config.files;
  }

  /** Stores a file; `kept` (an import, FileRestores) gives its id, time and owner. */
  async upload(
    principal: CustomerPrincipal,
    input: UploadInput,
    kept?: KeptFile,
  ): Promise<FileRecord> {
    const tenant = tenantOf(principal);
    const id = new Types.ObjectId().toHexString();
    const file: Omit<FileRecord, 'state' | 'sha256' | 'size'> = {
      id,
      fileId: kept?.id ?? id,
      namespace: namespaceOfPrincipal(principal),
      // A raw upload without a name is named by its id.
      name: input.name ?? kept?.id ?? id,
      contentType: input.contentType,
      owner: kept?.owner ?? ownerValueOf(principal),
      location: await this.placements.locate(tenant),
      createdAt: kept?.createdAt ?? new Date(),
    };
    const active = await this.limits.of(tenant);
    const max = active.limits.fileBytes;
    await this.records.begin(file);
    const heartbeat = this.heartbeat(id);
    let reserved = 0;
    const settles: string[] = [];
    const reserve = async (bytes: number, ref: string) => {
      const entry = await this.ledger.record(
        tenant,
        { file: id, ref, delta: bytes },
        max ?? undefined,
      );
      if (entry === 'over') {
        const usage = await this.ledger.used(tenant);
        throw limitRefusal(
          active,
          { limit: 'fileBytes', max: max ?? Infinity, usage },
          (members) => new FileQuotaExceededError(members, bytes),
        );
      }
      settles.push(ref);
      reserved += bytes;
    };
    try {
      if (input.declaredBytes !== null) await reserve(input.declaredBytes, `${id}:reserve`);
      const grow =
        input.declaredBytes === null
          ? async (total: number) => {
              while (total > reserved) await this.growTo(total, reserved, settles, reserve, id);
            }
          : undefined;
      const { size, sha256 } = await this.contents.write(file.location, id, file.name, input.body, {
        maxBytes: this.config.maxBytes,
        ...(grow ? { grow } : {}),
      });
      await heartbeat.stop();
      const stored: FileRecord = { ...file, size, sha256, state: 'stored' };
      return await this.events.record(
        changeScopeOf(principal),
        [{ resource: 'file', type: 'created', key: file.fileId }],
        async () => {
          const end = await this.ledger.record(tenant, {
            file: id,
            ref: `${id}:end`,
            delta: size - reserved,
            end: { outcome: 'stored', settles, size, sha256 },
          });
          if (end === 'over' || end.outcome !== 'stored') throw new UploadAbandonedError();
          if (!(await this.records.markStored(id, size, sha256))) {
            // Erased while it arrived: its bytes and its count go too.
            await this.ledger.record(tenant, { file: id, ref: `${id}:gone`, delta: -size });
            await this.contents.remove(file.location, id);
            throw new FileNotFoundError(file.fileId);
          }
          return stored;
        },
        (record) => [fileChange('created', record)],
      );
    } catch (error) {
      await heartbeat.stop();
      await this.abandon(tenant, { ...file, state: 'uploading', size: 0, sha256: null }).catch(
        () => undefined,
      );
      throw error;
    }
  }

  /**
   * Renews the record's heartbeat while the bytes arrive, every third of FILE_UPLOAD_STALE_MS.
   * One renewal at a time, and `stop` waits for the last: FerretDB writes an update back whole,
   * so a renewal still under way could undo the write that stores the record.
   */
  private heartbeat(id: string): { stop(): Promise<void> } {
    let last: Promise<void> = Promise.resolve();
    let stopped = false;
    const timer = setInterval(
      () => {
        last = last.then(() =>
          stopped ? undefined : this.records.heartbeat(id).catch(() => undefined),
        );
      },
      Math.max(250, Math.floor(this.config.uploadStaleMs / 3)),
    );
    timer.unref();
    return {
      stop: async () => {
        stopped = true;
        clearInterval(timer);
        await last;
      },
    };
  }

  /** One more reservation of a chunked upload: a step, or just what is missing near the limit. */
  private async growTo(
    total: number,
    reserved: number,
    settles: string[],
    reserve: (bytes: number, ref: string) => Promise<void>,
    id: string,
  ): Promise<void> {
    const ref = `${id}:grow:${settles.length}`;
    const step = Math.max(total - reserved, GROW_STEP_BYTES);
    try {
      await reserve(step, ref);
    } catch (error) {
      if (!(error instanceof DomainError) || step === total - reserved) throw error;
      await reserve(total - reserved, ref);
    }
  }

  /**
   * Gives an upload up: records its end as abandoned (giving back what it reserved), then
   * removes its bytes and its record. When the upload recorded its end first, the file is
   * stored: the record is finished instead. Returns what the file turned out to be.
   */
  async abandon(tenant: Tenant, file: FileRecord): Promise<'stored' | 'abandoned'> {
    const steps = await this.ledger.stepsOf(file.id);
    const counted = steps.filter((s) => isReservation(s.ref));
    const end = await this.ledger.record(tenant, {
      file: file.id,
      ref: `${file.id}:end`,
      delta: -counted.reduce((sum, s) => sum + s.delta, 0),
      end: { outcome: 'abandoned', settles: counted.map((s) => s.ref) },
    });
    if (end !== 'over' && end.outcome === 'stored') {
      await this.records.markStored(file.id, end.size ?? 0, end.sha256 ?? '');
      return 'stored';
    }
    await this.undoUnsettled(tenant, file.id, end === 'over' ? null : end);
    await this.contents.remove(file.location, file.id);
    await this.records.remove(file.id);
    return 'abandoned';
  }

  /** Gives back reservations recorded after the abandoning end was worked out. */
  private async undoUnsettled(tenant: Tenant, id: string, end: QuotaEntry | null): Promise<void> {
    const settled = new Set(end?.settles ?? []);
    for (const step of await this.ledger.stepsOf(id)) {
      if (!isReservation(step.ref) || settled.has(step.ref)) continue;
      await this.ledger.record(tenant, {
        file: id,
        ref: `${id}:undo@${step.seq}`,
        delta: -step.delta,
      });
    }
  }
}
