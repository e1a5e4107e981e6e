import { Inject, Injectable, type OnModuleInit } from '@nestjs/common';
import { ownerValueOf, tenantOf, type CustomerPrincipal } from '../auth';
import { ValidationFailedError, type DomainError } from '../common/errors';
import type { Tenant } from '../common/tenancy/namespace';
import { APP_CONFIG, type AppConfig } from '../config';
import { limitRefusal, TenantLimits } from '../plans';
import { changeScopeOf, EventsService, namespaceOfPrincipal } from '../events';
import { FileDto } from './dto/file.dto';
import { FileContents } from './file-contents';
import { fileChange } from './file-events';
import { FileLinks } from './file-links';
import {
  FileRecordsRepository,
  type FileListQuery,
  type FileRecord,
} from './file-records.repository';
import { FileNotFoundError, FileQuotaExceededError } from './files.errors';
import { FileQuotaLedger } from './quota/file-quota.ledger';

/** Files a batch of an erasure or a move handles at a time. */
const TENANT_BATCH = 100;

/** A sub key sees its own files; root and team keys see the namespace's. */
function ownerFilterOf(principal: CustomerPrincipal): string | undefined {
  return principal.kind === 'sub' ? ownerValueOf(principal) : undefined;
}

/**
 * Files of a namespace: reading, deleting and signed links (uploads: FileUploads). Every read
 * answers only stored files; a sub key reaches only the files it uploaded (404 for the others,
 * as if they were not there).
 */
@Injectable()
export class FilesService implements OnModuleInit {
  private readonly config: AppConfig['files'];

  constructor(
    private readonly records: FileRecordsRepository,
    private readonly contents: FileContents,
    private readonly ledger: FileQuotaLedger,
    private readonly links: FileLinks,
    private readonly events: EventsService,
    private readonly limits: TenantLimits,
    @Inject(APP_CONFIG) config: AppConfig,
  ) {
    this.config = config.files;
  }

  onModuleInit(): void {
    this.events.registerLookup('file', async (scope, change) => {
      const file = await this.records.findStored(
        { ...scope.tenant, branch: scope.branch },
        change.key,
      );
      return file ? { owner: file.owner, data: { ...FileDto.from(file) } } : null;
    });
  }

  /** A page of files in upload order, and whether more follow. */
  async list(
    principal: CustomerPrincipal,
    query: Omit<FileListQuery, 'owner'>,
  ): Promise<{ files: FileRecord[]; more: boolean }> {
    const owner = ownerFilterOf(principal);
    const found = await this.records.list(namespaceOfPrincipal(principal), {
      ...query,
      ...(owner !== undefined ? { owner } : {}),
    });
    return { files: found.slice(0, query.limit), more: found.length > query.limit };
  }

  async get(principal: CustomerPrincipal, id: string): Promise<FileRecord> {
    const file = await this.records.findStored(
      namespaceOfPrincipal(principal),
      id,
      ownerFilterOf(principal),
    );
    if (!file) throw new FileNotFoundError(id);
    return file;
  }

  /** Deletes a file: its bytes leave the quota before the answer. */
  async delete(principal: CustomerPrincipal, id: string): Promise<void> {
    const file = await this.get(principal, id);
    await this.events.record(
      changeScopeOf(principal),
      [{ resource: 'file', type: 'deleted', key: file.fileId }],
      () => this.erase(tenantOf(principal), file),
      () => [fileChange('deleted', file)],
    );
  }

  /**
   * Removes a file for good: marked `deleting` (no read finds it from then on), its bytes given
   * back to the quota (once, whoever repeats it), its bytes and its record removed. A sweep
   * repeats a deletion that stopped halfway.
   */
  async erase(tenant: Tenant, file: FileRecord): Promise<void> {
    if (file.state !== 'deleting') await this.records.markDeleting(file.id);
    if (file.state === 'stored' || file.state === 'deleting') {
      await this.ledger.record(tenant, {
        file: file.id,
        ref: `${file.id}:delete`,
        delta: -file.size,
      });
    }
    await this.contents.remove(file.location, file.id);
    await this.records.remove(file.id);
  }

  /** A signed link to the file, for `seconds` (at most FILE_LINK_MAX_SECONDS). */
  async link(
    principal: CustomerPrincipal,
    id: string,
    seconds: number,
  ): Promise<{ token: string; expiresAt: Date }> {
    if (seconds > this.config.linkMaxSeconds)
      throw new ValidationFailedError([
        {
          field: 'expiresInSeconds',
          message: `must not exceed FILE_LINK_MAX_SECONDS (${this.config.linkMaxSeconds})`,
        },
      ]);
    const file = await this.get(principal, id);
    const expiresAt = Math.floor(Date.now() / 1000) + seconds;
    const token = await this.links.sign({
      namespace: file.namespace,
      file: file.fileId,
      stored: file.id,
      expiresAt,
    });
    return { token, expiresAt: new Date(expiresAt * 1000) };
  }

  /**
   * The file a signed link grants: 403/410 for a bad or expired link, 404 once the stored copy
   * it names is gone — even when another file (of any owner) has taken its id since.
   */
  async byLink(token: string): Promise<FileRecord> {
    const grant = await this.links.verify(token);
    const file = await this.records.findStored(grant.namespace, grant.file);
    if (!file || file.id !== grant.stored) throw new FileNotFoundError(grant.file);
    return file;
  }

  /** The tenant's file bytes (stored and being uploaded) and its `fileBytes` limit (null: none). */
  async usage(tenant: Tenant): Promise<{ used: number; limit: number | null }> {
    const [used, active] = await Promise.all([this.ledger.used(tenant), this.limits.of(tenant)]);
    return { used, limit: active.limits.fileBytes };
  }

  /**
   * The refusal of `needed` bytes more when `usage` are counted: PLAN_LIMIT_EXCEEDED under a
   * plan, FILE_QUOTA_EXCEEDED without one (an import's dry run).
   */
  async quotaExceeded(tenant: Tenant, usage: number, needed: number): Promise<DomainError> {
    const active = await this.limits.of(tenant);
    return limitRefusal(
      active,
      { limit: 'fileBytes', max: active.limits.fileBytes ?? Infinity, usage },
      (members) => new FileQuotaExceededError(members, needed),
    );
  }

  /** Every stored file of a tenant in every branch, in upload order (the account export). */
  async storedOfTenant(tenant: Tenant): Promise<FileRecord[]> {
    const stored: FileRecord[] = [];
    for (let after: string | undefined; ;) {
      const batch = await this.records.ofTenant(tenant, TENANT_BATCH, after);
      if (batch.length === 0) return stored;
      stored.push(...batch.filter((file) => file.state === 'stored'));
      after = batch[batch.length - 1]?.id;
    }
  }

  /**
   * Every file of a tenant in every branch, whatever its state: an erasure. Uploads under way
   * are removed too (their end then finds no record and fails).
   */
  async eraseTenant(tenant: Tenant): Promise<void> {
    for (;;) {
      const batch = await this.records.ofTenant(tenant, TENANT_BATCH);
      if (batch.length === 0) break;
      for (const file of batch) {
        await this.contents.remove(file.location, file.id);
        await this.records.remove(file.id);
      }
    }
    await this.ledger.forgetTenant(tenant);
  }
}
