import { Inject, Injectable, Logger, type OnModuleDestroy } from '@nestjs/common';
import { readableBy, type Principal } from '../auth';
import { CollectionNotAllowedError } from '../auth/auth.errors';
import { ApiKeyService } from '../auth/api-key.service';
import { ForbiddenError, ValidationFailedError } from '../common/errors';
import { DUPLICATE } from '../common/mongo/duplicate';
import { BackgroundRuns } from '../common/scheduling/background-runs';
import { BackgroundTasks, type BackgroundTask } from '../common/scheduling/background-tasks';
import type { Tenant } from '../common/tenancy/namespace';
import { APP_CONFIG, type AppConfig } from '../config';
import { CollectionDropsService } from '../data';
import { EventsService } from '../events';
import { FilesService } from '../files';
import { IdentityLinks } from '../identity';
import { ClusterIdempotencyStores } from '../placement';
import { ProfileService, type AccountErasure, type Erasure } from '../profile';
import { ProjectService } from '../project/project.service';
import { TeamService } from '../team';
import { WebhooksService } from '../webhooks/webhooks.service';
import { digestOf, ErasureRepository, type ErasureRecord } from './erasure.repository';
import { tenantExists } from './tenant-exists';
import { TenantMoves } from './tenant-moves.service';
import { ErasureNotFoundError, TenantNotFoundError } from './lifecycle.errors';

/**
 * The steps of an erasure, in order. Each one is idempotent (deletes by owner), so a step that
 * ran half-way before a crash simply runs again. Keys (and a user's identities) go first, before
 * the erasure is answered: from then on nothing can act as the account. The last step removes the
 * owner itself and then repeats the others: a request that authenticated before its key went (or
 * an admin member minting a team key) may have added something meanwhile, and once the owner is
 * gone nothing can be added any more.
 */
const STEPS = ['keys', 'memberships', 'projects', 'collections', 'files', 'owner'] as const;
type Step = (typeof STEPS)[number];

/** Running erasures one poll takes over at most. */
const TAKEOVER_BATCH = 10;

/**
 * Account and team erasure: everything of a user (root and sub profiles, keys, projects, every
 * collection and file of its namespace in every branch, team memberships) or of a team (its keys,
 * memberships, projects, collections, files and the team). The request records the erasure and revokes
 * the keys; the rest runs in the background on the instance that holds the erasure's lease, and
 * a background task on every instance takes over an erasure whose lease ran out — so an erasure
 * finishes after a crash, on restart or elsewhere (docs/profiles.md).
 */
@Injectable()
export class ErasureService implements AccountErasure, OnModuleDestroy {
  private readonly logger = new Logger('Erasure');
  private readonly leaseMs: number;
  private readonly task: BackgroundTask;
  private readonly runs: BackgroundRuns;

  constructor(
    private readonly erasures: ErasureRepository,
    private readonly keys: ApiKeyService,
    private readonly identities: IdentityLinks,
    private readonly profiles: ProfileService,
    private readonly projects: ProjectService,
    private readonly collections: CollectionDropsService,
    private readonly files: FilesService,
    private readonly teams: TeamService,
    private readonly events: EventsService,
    private readonly webhooks: WebhooksService,
    private readonly moves: TenantMoves,
    private readonly records: ClusterIdempotencyStores,
    @Inject(APP_CONFIG) config: AppConfig,
    tasks: BackgroundTasks,
  ) {
    this.leaseMs = config.lifecycle.erasureLeaseMs;
    this.task = tasks.register({
      name: 'erasures',
      intervalMs: config.lifecycle.pollMs,
      // Backs off only while no erasure runs; one that starts is seen within its first lease,
      // so one abandoned is still taken over within its lease plus LIFECYCLE_POLL_MS.
      idleBackoff: { maxMs: config.lifecycle.erasureLeaseMs },
      run: () => this.takeOverAbandoned(),
    });
    this.runs = new BackgroundRuns(this.task, this.logger);
    // A tenant being erased has lost its rights from the erasure's start: its webhooks stop.
    webhooks.registerOwnerCheck(async (tenants) => {
      const running = await this.erasures.runningAmong(tenants.map(digestOf));
      return tenants.filter((tenant) => running.has(digestOf(tenant)));
    });
  }

  /**
   * Stops the erasures this instance works on between two steps; what is left is taken over once
   * the lease runs out.
   */
  async onModuleDestroy(): Promise<void> {
    await this.runs.stop();
  }

  /**
   * Starts erasing a user or a team and returns the erasure, its keys revoked already. A second
   * request for the same target gets the same erasure (running, or done when the target is gone);
   * an unknown target → 404.
   */
  async start(tenant: Tenant): Promise<Erasure> {
    const digest = digestOf(tenant);
    const running = await this.erasures.findActive(digest);
    if (running) return running;
    if (!(await this.targetExists(tenant))) {
      const last = await this.erasures.findLatest(digest);
      if (last) return last;
      throw new TenantNotFoundError(tenant);
    }
    const now = new Date();
    const created = await this.erasures.insertRunning(tenant, digest, now, this.leaseFrom(now));
    if (created === DUPLICATE) {
      // A concurrent request inserted it: that one runs it.
      const concurrent = await this.erasures.findActive(digest);
      if (concurrent) return concurrent;
      return this.start(tenant);
    }
    // The keys go before the answer: when the caller hears 202, nothing acts as the target.
    await this.completeStep(created, 'keys');
    this.continueInBackground(created);
    return created;
  }

  /**
   * Whether the user or team exists and no erasure of it has started: the usage snapshot
   * measures only such tenants (an erased tenant's usage rows stay, docs/usage.md).
   */
  async isPresent(tenant: Tenant): Promise<boolean> {
    if (await this.erasures.findActive(digestOf(tenant))) return false;
    return this.targetExists(tenant);
  }

  /** A user erasing its own account (DELETE /profile): an unbound root key, naming its subject. */
  async eraseOwnAccount(
    principal: Extract<Principal, { kind: 'root' }>,
    confirm: string,
  ): Promise<Erasure> {
    if (principal.boundBranch !== null)
      throw new ForbiddenError(
        `The API key is bound to branch '${principal.boundBranch}'; erasing the account needs an unbound root key.`,
      );
    // An erasure drops every collection: not for a key limited to some.
    if (readableBy(principal)) throw new CollectionNotAllowedError(null, 'write');
    if (confirm !== principal.subject)
      throw new ValidationFailedError([
        { field: 'confirm', message: 'must be your subject, to confirm the erasure' },
      ]);
    return this.start({ kind: 'user', id: principal.subject });
  }

  /** Every erasure, newest first (the operator's list); a page of `limit` after `afterId`. */
  list(limit: number, afterId?: string): Promise<{ erasures: Erasure[]; more: boolean }> {
    return this.erasures.list(limit, afterId);
  }

  async get(id: string): Promise<Erasure> {
    const erasure = await this.erasures.findById(id);
    if (!erasure) throw new ErasureNotFoundError(id);
    return erasure;
  }

  private leaseFrom(now: Date = new Date()): Date {
    return new Date(now.getTime() + this.leaseMs);
  }

  private targetExists(tenant: Tenant): Promise<boolean> {
    return tenantExists(tenant, this.profiles, this.teams);
  }

  private continueInBackground(erasure: ErasureRecord): void {
    this.runs.start(() => this.finish(erasure), 'erasure interrupted', { erasure: erasure.id });
  }

  /** Runs the steps not done yet, renewing the lease after each, then marks the erasure done. */
  private async finish(erasure: ErasureRecord): Promise<void> {
    for (const step of STEPS) {
      if (erasure.stepsDone.includes(step)) continue;
      if (this.runs.stopping) return;
      await this.completeStep(erasure, step);
    }
    await this.erasures.markDone(erasure.id, new Date());
    this.logger.log({ erasure: erasure.id, kind: erasure.kind }, 'erasure done');
  }

  /** Runs a step and records it done, renewing the lease. */
  private async completeStep(erasure: ErasureRecord, step: Step): Promise<void> {
    await this.runStep(erasure, step);
    await this.erasures.markStepDone(erasure.id, step, this.leaseFrom());
    erasure.stepsDone.push(step);
  }

  private async runStep(erasure: ErasureRecord, step: Step): Promise<void> {
    if (erasure.target === undefined) throw new Error('a running erasure names its target');
    const tenant: Tenant = { kind: erasure.kind, id: erasure.target };
    switch (step) {
      case 'keys':
        // A user's identities go with its keys: no token acts as the account from then on, and
        // a later token of such an identity is an unknown identity (a fresh user, or 403).
        if (tenant.kind === 'user') await this.identities.eraseOf(tenant.id);
        return this.keys.revokeAllOf(tenant);
      case 'memberships':
        return this.teams.deleteMembershipsOf(tenant);
      case 'projects':
        return this.projects.deleteAllOf(tenant);
      case 'collections':
        return this.dropCollections(erasure.id, tenant);
      case 'files':
        return this.eraseFiles(tenant);
      case 'owner':
        // A request that authenticated before the keys went may have created a collection or
        // uploaded a file since.
        await this.dropCollections(erasure.id, tenant);
        await this.eraseFiles(tenant);
        await this.deleteOwner(tenant);
        // With the owner gone nothing new can be attached to it (a membership, a team key, a
        // project); what a request made in the meantime goes now.
        for (const again of ['keys', 'memberships', 'projects'] as const)
          await this.runStep(erasure, again);
        // Its change feed names it in every event, its webhooks and deliveries too.
        await this.webhooks.eraseTenant(tenant);
        await this.events.eraseTenant(tenant);
        // Stored idempotent responses name it too (sealed, but still its content).
        await this.records.eraseTenant(tenant);
        return;
    }
  }

  private async deleteOwner(tenant: Tenant): Promise<void> {
    switch (tenant.kind) {
      case 'user':
        return this.profiles.eraseUser(tenant.id);
      case 'team':
        return this.teams.delete(tenant.id);
    }
  }

  private async dropCollections(id: string, tenant: Tenant): Promise<void> {
    await this.refuseDuringMove(tenant);
    await this.collections.dropAll(tenant, () =>
      this.erasures.countCollectionDropped(id, this.leaseFrom()),
    );
  }

  /** Every file of the tenant: records, bytes wherever they are, and its quota ledger. */
  private async eraseFiles(tenant: Tenant): Promise<void> {
    await this.refuseDuringMove(tenant);
    await this.files.eraseTenant(tenant);
  }

  /**
   * A move copies collections and files the erasure would miss: the erasure goes on after it
   * (its lease runs out and a later poll takes it over).
   */
  private async refuseDuringMove(tenant: Tenant): Promise<void> {
    if (await this.moves.isRunning(tenant)) {
      throw new Error('a move of the tenant is running; the erasure goes on once it ends');
    }
  }

  /**
   * Takes over running erasures whose holder let the lease run out (it died, or stopped). Two
   * instances may take the same one at once (FerretDB does not re-check the filter of an
   * update): the steps are idempotent, so both finishing it does no harm.
   */
  /** Takes over the erasures whose lease ran out; whether any erasure runs (the poll keeps pace). */
  private async takeOverAbandoned(): Promise<boolean> {
    const running = await this.erasures.findRunningByLease(TAKEOVER_BATCH);
    const now = Date.now();
    for (const erasure of running) {
      if (this.runs.stopping || erasure.leaseUntil.getTime() >= now) break;
      if (!(await this.erasures.takeOver(erasure, this.leaseFrom()))) continue;
      this.logger.log({ erasure: erasure.id }, 'resuming an erasure');
      this.continueInBackground(erasure);
    }
    return running.length > 0;
  }
}
