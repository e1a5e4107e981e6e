import {
  Inject,
  Injectable,
  Logger,
  type OnApplicationBootstrap,
  type OnModuleDestroy,
} from '@nestjs/common';
import { InjectModel } from '@nestjs/mongoose';
import type { Model, Types } from 'mongoose';
import { createHash } from 'node:crypto';
import type { Tenant } from '../auth';
import { ApiKeyService } from '../auth/api-key.service';
import { DUPLICATE, orDuplicate } from '../common/mongo/duplicate';
import { isObjectIdHex } from '../common/mongo/object-id';
import { RepeatingTask } from '../common/scheduling/repeating-task';
import { APP_CONFIG, type AppConfig } from '../config';
import { CollectionDropsService } from '../data/collection-drops.service';
import { EventsService } from '../events';
import { ProfileService } from '../profile';
import { ProjectService } from '../project/project.service';
import { TeamMembershipRepository } from '../team/team-membership.repository';
import { TeamRepository } from '../team/team.repository';
import { WebhooksService } from '../webhooks/webhooks.service';
import { ErasureNotFoundError, ErasureTargetNotFoundError } from './lifecycle.errors';
import { ErasureDocument, type ErasureKind } from './erasure.schema';

export type Erasure = Omit<ErasureDocument, '_id' | 'activeKey' | 'targetDigest' | 'target'> & {
  id: string;
};

/**
 * The steps of an erasure, in order. Each one is idempotent (deletes by owner), so a step that
 * ran half-way before a crash simply runs again. Keys go first, before the erasure is answered:
 * from then on nothing can act as the account. The last step removes the owner itself and then
 * repeats the others: a request that authenticated before its key went (or an admin member
 * minting a team key) may have added something meanwhile, and once the owner is gone nothing
 * can be added any more.
 */
const STEPS = ['keys', 'memberships', 'projects', 'collections', 'owner'] as const;
type Step = (typeof STEPS)[number];

/** Running erasures one poll takes over at most. */
const TAKEOVER_BATCH = 10;

function digestOf(kind: ErasureKind, target: string): string {
  return createHash('sha256').update(`erasure\u0000${kind}\u0000${target}`).digest('hex');
}

function toErasure(doc: ErasureDocument): Erasure {
  return {
    id: doc._id.toHexString(),
    kind: doc.kind,
    status: doc.status,
    stepsDone: doc.stepsDone,
    collectionsDropped: doc.collectionsDropped,
    leaseUntil: doc.leaseUntil,
    runs: doc.runs,
    requestedAt: doc.requestedAt,
    ...(doc.finishedAt !== undefined ? { finishedAt: doc.finishedAt } : {}),
  };
}

/**
 * Account and team erasure: everything of a user (root and sub profiles, keys, projects, every
 * collection of its namespace in every branch, team memberships) or of a team (its keys,
 * memberships, projects, collections and the team). The request records the erasure and revokes
 * the keys; the rest runs in the background on the instance that holds the erasure's lease, and
 * any instance takes over an erasure whose lease ran out — so an erasure finishes after a crash,
 * on restart or elsewhere (docs/profiles.md).
 */
@Injectable()
export class ErasureService implements OnApplicationBootstrap, OnModuleDestroy {
  private readonly logger = new Logger('Erasure');
  private readonly leaseMs: number;
  private readonly task: RepeatingTask;
  private readonly working = new Set<Promise<void>>();

  constructor(
    @InjectModel(ErasureDocument.name) private readonly erasures: Model<ErasureDocument>,
    private readonly keys: ApiKeyService,
    private readonly profiles: ProfileService,
    private readonly projects: ProjectService,
    private readonly collections: CollectionDropsService,
    private readonly teams: TeamRepository,
    private readonly memberships: TeamMembershipRepository,
    private readonly events: EventsService,
    private readonly webhooks: WebhooksService,
    @Inject(APP_CONFIG) config: AppConfig,
  ) {
    this.leaseMs = config.lifecycle.erasureLeaseMs;
    this.task = new RepeatingTask(
      config.lifecycle.pollMs,
      () => this.takeOverAbandoned(),
      (error) => this.logger.warn({ err: error }, 'could not look for erasures to finish'),
    );
  }

  onApplicationBootstrap(): void {
    this.task.start();
  }

  /** Stops between two steps; what is left is taken over once the lease runs out. */
  async onModuleDestroy(): Promise<void> {
    await this.task.stop();
    await Promise.all(this.working);
  }

  /**
   * Starts erasing a user or a team and returns the erasure, its keys revoked already. A second
   * request for the same target gets the same erasure (running, or done when the target is gone);
   * an unknown target → 404.
   */
  async start(kind: ErasureKind, target: string): Promise<Erasure> {
    const digest = digestOf(kind, target);
    const running = await this.findActive(digest);
    if (running) return toErasure(running);
    if (!(await this.targetExists(kind, target))) {
      const last = await this.erasures
        .findOne({ targetDigest: digest })
        .sort({ requestedAt: -1 })
        .lean<ErasureDocument>()
        .exec();
      if (last) return toErasure(last);
      throw new ErasureTargetNotFoundError(kind, target);
    }
    const now = new Date();
    const created = await orDuplicate(() =>
      this.erasures.create({
        kind,
        target,
        targetDigest: digest,
        activeKey: digest,
        status: 'running',
        stepsDone: [],
        collectionsDropped: 0,
        leaseUntil: new Date(now.getTime() + this.leaseMs),
        runs: 1,
        requestedAt: now,
      }),
    );
    if (created === DUPLICATE) {
      // A concurrent request inserted it: that one runs it.
      const concurrent = await this.findActive(digest);
      if (concurrent) return toErasure(concurrent);
      return this.start(kind, target);
    }
    const doc = created.toObject<ErasureDocument>();
    // The keys go before the answer: when the caller hears 202, nothing acts as the target.
    await this.completeStep(doc, 'keys');
    this.continueInBackground(doc);
    return toErasure(doc);
  }

  async get(id: string): Promise<Erasure> {
    const doc = isObjectIdHex(id)
      ? await this.erasures.findById(id).lean<ErasureDocument>().exec()
      : null;
    if (!doc) throw new ErasureNotFoundError(id);
    return toErasure(doc);
  }

  private findActive(digest: string): Promise<ErasureDocument | null> {
    return this.erasures.findOne({ activeKey: digest }).lean<ErasureDocument>().exec();
  }

  private targetExists(kind: ErasureKind, target: string): Promise<boolean> {
    return kind === 'user' ? this.profiles.userExists(target) : this.teams.exists(target);
  }

  private continueInBackground(doc: ErasureDocument): void {
    const work = this.finish(doc)
      .catch((error: unknown) => {
        // The lease runs out and the erasure is taken over; nothing is lost.
        this.logger.warn({ err: error, erasure: doc._id.toHexString() }, 'erasure interrupted');
      })
      .finally(() => this.working.delete(work));
    this.working.add(work);
  }

  /** Runs the steps not done yet, renewing the lease after each, then marks the erasure done. */
  private async finish(doc: ErasureDocument): Promise<void> {
    for (const step of STEPS) {
      if (doc.stepsDone.includes(step)) continue;
      if (this.task.isStopped) return;
      await this.completeStep(doc, step);
    }
    await this.erasures
      .updateOne(
        { _id: doc._id },
        {
          $set: {
            status: 'done',
            activeKey: `done:${doc._id.toHexString()}`,
            finishedAt: new Date(),
          },
          $unset: { target: 1 },
        },
      )
      .exec();
    this.logger.log({ erasure: doc._id.toHexString(), kind: doc.kind }, 'erasure done');
  }

  /** Runs a step and records it done, renewing the lease. */
  private async completeStep(doc: ErasureDocument, step: Step): Promise<void> {
    await this.runStep(doc, step);
    await this.erasures
      .updateOne(
        { _id: doc._id },
        {
          $addToSet: { stepsDone: step },
          $set: { leaseUntil: new Date(Date.now() + this.leaseMs) },
        },
      )
      .exec();
    doc.stepsDone.push(step);
  }

  private async runStep(doc: ErasureDocument, step: Step): Promise<void> {
    const target = doc.target;
    if (target === undefined) throw new Error('a running erasure names its target');
    const tenant: Tenant = { kind: doc.kind, id: target };
    const owner = doc.kind === 'user' ? { subject: target } : { teamId: target };
    switch (step) {
      case 'keys':
        return this.keys.revokeAllOf(owner);
      case 'memberships':
        if (doc.kind === 'user') await this.memberships.deleteForSubject(target);
        else await this.memberships.deleteForTeam(target);
        return;
      case 'projects':
        return this.projects.deleteAllOf(tenant);
      case 'collections':
        await this.dropCollections(doc._id, tenant);
        return;
      case 'owner':
        // A request that authenticated before the keys went may have created a collection since.
        await this.dropCollections(doc._id, tenant);
        if (doc.kind === 'user') await this.profiles.eraseUser(target);
        else await this.teams.delete(target);
        // With the owner gone nothing new can be attached to it (a membership, a team key, a
        // project); what a request made in the meantime goes now.
        for (const again of ['keys', 'memberships', 'projects'] as const)
          await this.runStep(doc, again);
        // Its change feed names it in every event, its webhooks and deliveries too.
        await this.webhooks.eraseTenant(tenant);
        await this.events.eraseTenant(tenant);
        return;
    }
  }

  private async dropCollections(id: Types.ObjectId, tenant: Tenant): Promise<void> {
    await this.collections.dropAll(tenant, async () => {
      await this.erasures
        .updateOne(
          { _id: id },
          {
            $inc: { collectionsDropped: 1 },
            $set: { leaseUntil: new Date(Date.now() + this.leaseMs) },
          },
        )
        .exec();
    });
  }

  /**
   * Takes over running erasures whose holder let the lease run out (it died, or stopped). Two
   * instances may take the same one at once (FerretDB does not re-check the filter of an
   * update): the steps are idempotent, so both finishing it does no harm.
   */
  private async takeOverAbandoned(): Promise<void> {
    const now = new Date();
    const abandoned = await this.erasures
      .find({ status: 'running', leaseUntil: { $lt: now } })
      .limit(TAKEOVER_BATCH)
      .lean<ErasureDocument[]>()
      .exec();
    for (const doc of abandoned) {
      if (this.task.isStopped) return;
      const taken = await this.erasures
        .updateOne(
          { _id: doc._id, leaseUntil: doc.leaseUntil },
          { $set: { leaseUntil: new Date(Date.now() + this.leaseMs) }, $inc: { runs: 1 } },
        )
        .exec();
      if (taken.modifiedCount !== 1) continue;
      this.logger.log({ erasure: doc._id.toHexString() }, 'resuming an erasure');
      this.continueInBackground(doc);
    }
  }
}
