import { Inject, Injectable, Logger } from '@nestjs/common';
import { BackgroundTasks, type BackgroundTask } from '../common/scheduling/background-tasks';
import { namespaceOf, type Tenant } from '../common/tenancy/namespace';
import { APP_CONFIG, type AppConfig } from '../config';
import { EventsService } from '../events';
import { EventDto } from '../events/dto/events.dto';
import type { FeedEvent } from '../events/event-scope';
import { AttemptClaimsRepository } from './attempt-claims.repository';
import { ClusterDatabases } from '../placement';
import { UsageMeter } from '../usage';
import { DeliveriesRepository, type PlacedDelivery } from './deliveries.repository';
import { postDelivery } from './webhook-sender';
import type { Webhook } from './webhook.schema';
import { WebhooksRepository } from './webhooks.repository';

/** Of these webhook owners, the ones that lost their rights (e.g. being erased): one query. */
export type OwnersLost = (owners: Tenant[]) => Promise<Tenant[]>;

const ownerKey = (tenant: Tenant): string => `${tenant.kind}:${tenant.id}`;

/** Events fanned out per webhook and round, and deliveries sent per round. */
const FAN_OUT_BATCH = 200;
const SEND_BATCH = 20;
/** The longest retry delay. */
const MAX_RETRY_MS = 3_600_000;
/** Retries falling due within this of each other share one wake-up (at the later time). */
const RETRY_WAKE_MS = 100;

/**
 * The deliveries' background work, every EVENTS_POLL_MS on every instance (a background task;
 * while its rounds find nothing it backs off up to WEBHOOK_IDLE_POLL_MAX_MS, and an append
 * through this instance or a retry it scheduled falling due wakes it):
 * fan new events out into stored deliveries (one per event and webhook, an insert under a unique
 * id), then send the due ones under a claim and a lease, so deliveries survive restarts and no
 * event is sent twice by two instances at once. A failed attempt is retried with exponential
 * backoff for WEBHOOK_RETRY_WINDOW_MS; an endpoint that failed for that long without a success
 * is disabled.
 */
@Injectable()
export class WebhookDeliveries {
  private readonly logger = new Logger('Webhooks');
  private readonly settings: AppConfig['webhooks'];
  private readonly sweepMs: number;
  /** When this instance last deleted stale attempt claims (0: not yet). */
  private claimsSweptAt = 0;
  private ownersLost: OwnersLost = () => Promise.resolve([]);
  /** The retries this instance scheduled, by when they fall due (to RETRY_WAKE_MS): wake then. */
  private readonly retryWakes = new Map<number, NodeJS.Timeout>();
  /** Absent when the change feed is off: there is nothing to deliver then. */
  private readonly task: BackgroundTask;

  constructor(
    private readonly webhooks: WebhooksRepository,
    private readonly deliveries: DeliveriesRepository,
    private readonly claims: AttemptClaimsRepository,
    private readonly events: EventsService,
    private readonly databases: ClusterDatabases,
    private readonly usage: UsageMeter,
    @Inject(APP_CONFIG) config: AppConfig,
    tasks: BackgroundTasks,
  ) {
    this.settings = config.webhooks;
    this.sweepMs = config.events.sweepMs;
    this.task = tasks.register({
      name: 'webhook-deliveries',
      intervalMs: config.events.pollMs,
      // Events appended through this instance wake it; those of another instance are that
      // instance's to fan out (any instance does it, this one within the ceiling if it died).
      idleBackoff: { maxMs: config.webhooks.idlePollMaxMs },
      run: () => this.run(),
      enabled: events.enabled,
    });
    events.onAppend(() => this.task.wake());
  }

  /**
   * How the deliveries learn which owners lost their rights: asked once per round, after the
   * round's events were read and before anything is fanned out or sent, so a webhook of an owner
   * that lost them gets nothing more — not what was written after, not what was still due.
   */
  registerOwnerCheck(check: OwnersLost): void {
    this.ownersLost = check;
  }

  /** The keys (`kind:id`) of the owners among these that lost their rights. */
  private async lostAmong(owners: Tenant[]): Promise<Set<string>> {
    const unique = new Map(owners.map((owner) => [ownerKey(owner), owner]));
    if (unique.size === 0) return new Set();
    return new Set((await this.ownersLost([...unique.values()])).map(ownerKey));
  }

  /** One round now: fan out new events, send what is due; a call while one runs joins it. */
  runNow(): Promise<void> {
    return this.task.runNow();
  }

  /** One round; whether it found events to fan out or deliveries to send. */
  private async run(): Promise<boolean> {
    const fannedOut = await this.fanOut();
    const sent = await this.sendDue();
    return fannedOut || sent;
  }

  /** Whether any webhook had new events. */
  private async fanOut(): Promise<boolean> {
    const read: { webhook: Webhook; owner: Tenant; events: FeedEvent[] }[] = [];
    for (const webhook of await this.webhooks.findActive()) {
      if (this.task?.isStopped) return true;
      const { kind, id, branch } = namespaceOf(webhook);
      // A move takes the tenant's feed and deliveries to another cluster: they go on there.
      if (await this.databases.isMoving({ kind, id })) continue;
      const events = await this.events.readNamespace({ kind, id }, branch, {
        after: webhook.cursor,
        limit: FAN_OUT_BATCH,
        ...(webhook.collection !== undefined ? { collection: webhook.collection } : {}),
      });
      if (events.length > 0) read.push({ webhook, owner: { kind, id }, events });
    }
    if (read.length === 0) return false;
    // Asked after the reads: an owner that held its rights then held them when these were written.
    const lost = await this.lostAmong(read.map(({ owner }) => owner));
    for (const { webhook, owner, events } of read) {
      if (this.task?.isStopped) return true;
      if (lost.has(ownerKey(owner))) continue;
      const { kind, id } = owner;
      const last = events.at(-1);
      if (!last) continue;
      const now = new Date();
      for (const event of events) {
        if (!webhook.events.includes(event.type)) continue;
        await this.deliveries.insertOnce(
          {
            webhookId: webhook.id,
            tenant: { kind, id },
            eventId: String(event.seq),
            payload: JSON.stringify(EventDto.from(event)),
          },
          now,
        );
      }
      await this.webhooks.advanceCursor(webhook.id, last.seq);
    }
    return true;
  }

  /** Whether any delivery was due. */
  private async sendDue(): Promise<boolean> {
    const now = new Date();
    // Claims of instances that died mid-attempt: their lease windows are long over. Looked for
    // at the feed's sweep interval, not on every round: they are a day old before they go.
    if (now.getTime() - this.claimsSweptAt >= this.sweepMs) {
      this.claimsSweptAt = now.getTime();
      await this.claims.deleteCreatedBefore(new Date(now.getTime() - this.settings.retryWindowMs));
    }
    const due = await this.deliveries.findDue(now, SEND_BATCH);
    const lost = await this.lostAmong(
      due.map((delivery) => ({ kind: delivery.tenantKind, id: delivery.tenant })),
    );
    await Promise.all(
      due.map((delivery) =>
        // Its owner lost its rights: nothing more is sent (the erasure deletes the rest).
        lost.has(ownerKey({ kind: delivery.tenantKind, id: delivery.tenant }))
          ? this.deliveries.markFailed(delivery)
          : this.attempt(delivery),
      ),
    );
    return due.length > 0;
  }

  private async attempt(delivery: PlacedDelivery): Promise<void> {
    if (await this.databases.isMoving({ kind: delivery.tenantKind, id: delivery.tenant })) return;
    const leaseMs = this.settings.timeoutMs * 2;
    const window = Math.floor(Date.now() / leaseMs);
    if (!(await this.claims.claim(`${delivery.id}:${delivery.attempts.length + 1}:${window}`)))
      return;
    // Read again under the claim: another instance may have finished this attempt already.
    const current = await this.deliveries.findById(delivery);
    if (current?.status !== 'pending' || current.attempts.length !== delivery.attempts.length)
      return;
    await this.deliveries.lease(delivery, new Date(Date.now() + leaseMs));
    const webhook = await this.webhooks.findById(delivery.webhookId);
    if (!webhook || webhook.disabledAt !== null) {
      await this.deliveries.markFailed(delivery);
      return;
    }
    const attempt = await postDelivery(webhook, delivery, this.settings);
    const ok = attempt.status !== undefined && attempt.status >= 200 && attempt.status < 300;
    const tries = delivery.attempts.length + 1;
    const expired = Date.now() - delivery.createdAt.getTime() >= this.settings.retryWindowMs;
    const backoff = Math.min(this.settings.retryBaseMs * 2 ** (tries - 1), MAX_RETRY_MS);
    // A success clears the endpoint's failure before the delivery reads as delivered, so whoever
    // sees it delivered sees the endpoint healthy (a crash in between only repeats the send).
    if (ok) {
      this.usage.add({ kind: delivery.tenantKind, id: delivery.tenant }, { webhookEvents: 1 });
      await this.recordHealth(webhook, true);
    }
    await this.deliveries.recordAttempt(
      delivery,
      attempt,
      ok ? 'delivered' : expired ? 'failed' : 'pending',
      new Date(Date.now() + backoff),
    );
    if (!ok && !expired) this.wakeAt(Date.now() + backoff);
    // The claim stays (swept after the retry window): deleting it would let an instance that
    // read the delivery as due before this attempt claim the same attempt again.
    if (!ok) await this.recordHealth(webhook, false);
  }

  /**
   * Wakes the rounds when a retry falls due, so an idle instance, whose rounds back off, sends
   * it on time rather than up to WEBHOOK_IDLE_POLL_MAX_MS late. One timer per RETRY_WAKE_MS of
   * due times, however many retries fall in it.
   */
  private wakeAt(at: number): void {
    const due = Math.ceil(at / RETRY_WAKE_MS) * RETRY_WAKE_MS;
    if (this.retryWakes.has(due)) return;
    const timer = setTimeout(() => {
      this.retryWakes.delete(due);
      this.task.wake();
    }, due - Date.now());
    timer.unref();
    this.retryWakes.set(due, timer);
  }

  /** A success clears the endpoint's failure; failing for the whole window disables it. */
  private async recordHealth(webhook: Webhook, ok: boolean): Promise<void> {
    if (ok) {
      if (webhook.failingSince !== null) await this.webhooks.clearFailing(webhook.id);
      return;
    }
    const since = webhook.failingSince ?? new Date();
    const disable = Date.now() - since.getTime() >= this.settings.retryWindowMs;
    await this.webhooks.markFailing(webhook.id, since, disable);
    if (disable) this.logger.warn({ webhook: webhook.id }, 'webhook disabled');
  }
}
