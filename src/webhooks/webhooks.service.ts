import {
  Inject,
  Injectable,
  Logger,
  type OnApplicationBootstrap,
  type OnModuleDestroy,
} from '@nestjs/common';
import { InjectModel } from '@nestjs/mongoose';
import { Types, type Model } from 'mongoose';
import { tenantOf, type CustomerPrincipal, type Tenant } from '../auth';
import { ValidationFailedError } from '../common/errors';
import { DUPLICATE, orDuplicate } from '../common/mongo/duplicate';
import { isObjectIdHex } from '../common/mongo/object-id';
import { RepeatingTask } from '../common/scheduling/repeating-task';
import { APP_CONFIG, type AppConfig } from '../config';
import { EventDto } from '../events/dto/events.dto';
import type { EventType } from '../events/event.schema';
import { EventsService } from '../events';
import { postDelivery } from './webhook-sender';
import { resolveProblem, urlProblem } from './webhook-url';
import { isWebhookSecret, newWebhookSecret } from './webhook-signature';
import { AttemptClaimDocument, DeliveryDocument, WebhookDocument } from './webhook.schema';
import { WebhookNotFoundError, WebhookQuotaExceededError } from './webhooks.errors';

export interface NewWebhook {
  url: string;
  events: EventType[];
  collection?: string;
  secret?: string;
}

/** Events fanned out per webhook and round, and deliveries sent per round. */
const FAN_OUT_BATCH = 200;
const SEND_BATCH = 20;
/** The longest retry delay. */
const MAX_RETRY_MS = 3_600_000;

function namespaceOf(principal: CustomerPrincipal) {
  const tenant = tenantOf(principal);
  return { tenantKind: tenant.kind, tenant: tenant.id, branch: principal.branch };
}

/**
 * Webhooks: endpoints that receive a namespace's events as signed POSTs (Standard Webhooks).
 * Every instance fans new events out into stored deliveries (one per event and webhook, an
 * insert under a unique id) and sends due deliveries under a lease, so deliveries survive
 * restarts and no event is sent twice by two instances at once. A failed attempt is retried
 * with exponential backoff for WEBHOOK_RETRY_WINDOW_MS; an endpoint that failed for that long
 * without a success is disabled.
 */
@Injectable()
export class WebhooksService implements OnApplicationBootstrap, OnModuleDestroy {
  private readonly logger = new Logger('Webhooks');
  private readonly task: RepeatingTask;
  private readonly settings: AppConfig['webhooks'];

  constructor(
    @InjectModel(WebhookDocument.name) private readonly webhooks: Model<WebhookDocument>,
    @InjectModel(DeliveryDocument.name) private readonly deliveries: Model<DeliveryDocument>,
    @InjectModel(AttemptClaimDocument.name) private readonly claims: Model<AttemptClaimDocument>,
    private readonly events: EventsService,
    @Inject(APP_CONFIG) config: AppConfig,
  ) {
    this.settings = config.webhooks;
    this.task = new RepeatingTask(
      config.events.pollMs,
      async () => {
        await this.fanOut();
        await this.sendDue();
      },
      (error) => this.logger.warn({ err: error }, 'could not run webhook deliveries'),
    );
  }

  onApplicationBootstrap(): void {
    if (this.events.enabled) this.task.start();
  }

  async onModuleDestroy(): Promise<void> {
    await this.task.stop();
  }

  /** Registers an endpoint for the caller's namespace; it receives the events from now on. */
  async create(
    principal: CustomerPrincipal,
    input: NewWebhook,
  ): Promise<{ webhook: WebhookDocument; secret: string }> {
    const problem =
      urlProblem(input.url) ?? (await resolveProblem(input.url, this.settings.allowPrivate));
    if (problem) throw new ValidationFailedError([{ field: 'url', message: problem }]);
    if (input.secret !== undefined && !isWebhookSecret(input.secret))
      throw new ValidationFailedError([
        { field: 'secret', message: 'must be whsec_ followed by base64 of 24 to 64 bytes' },
      ]);
    const ns = namespaceOf(principal);
    if ((await this.webhooks.countDocuments(ns).exec()) >= this.settings.max)
      throw new WebhookQuotaExceededError(this.settings.max);
    const secret = input.secret ?? newWebhookSecret();
    const created = await this.webhooks.create({
      ...ns,
      url: input.url,
      events: [...new Set(input.events)],
      ...(input.collection !== undefined ? { collection: input.collection } : {}),
      secret,
      cursor: await this.events.latest(tenantOf(principal), principal.branch),
      failingSince: null,
      disabledAt: null,
      createdAt: new Date(),
    });
    return { webhook: created.toObject<WebhookDocument>(), secret };
  }

  list(principal: CustomerPrincipal): Promise<WebhookDocument[]> {
    return this.webhooks
      .find(namespaceOf(principal))
      .sort({ createdAt: 1 })
      .lean<WebhookDocument[]>()
      .exec();
  }

  async remove(principal: CustomerPrincipal, id: string): Promise<void> {
    const gone = isObjectIdHex(id)
      ? await this.webhooks
          .deleteOne({ _id: new Types.ObjectId(id), ...namespaceOf(principal) })
          .exec()
      : { deletedCount: 0 };
    if (gone.deletedCount !== 1) throw new WebhookNotFoundError(id);
    await this.deliveries.deleteMany({ webhookId: id }).exec();
  }

  /** The newest deliveries of one of the caller's webhooks, with their attempts. */
  async deliveriesOf(
    principal: CustomerPrincipal,
    id: string,
    limit: number,
  ): Promise<DeliveryDocument[]> {
    const exists =
      isObjectIdHex(id) &&
      (await this.webhooks
        .exists({ _id: new Types.ObjectId(id), ...namespaceOf(principal) })
        .exec());
    if (!exists) throw new WebhookNotFoundError(id);
    return this.deliveries
      .find({ webhookId: id })
      .sort({ createdAt: -1, _id: -1 })
      .limit(limit)
      .lean<DeliveryDocument[]>()
      .exec();
  }

  /** Deletes a tenant's webhooks and deliveries in every branch (an erasure). */
  async eraseTenant(tenant: Tenant): Promise<void> {
    const filter = { tenantKind: tenant.kind, tenant: tenant.id };
    await this.deliveries.deleteMany(filter).exec();
    await this.webhooks.deleteMany(filter).exec();
  }

  /** One round now: fan out new events, send what is due (also every EVENTS_POLL_MS). */
  runNow(): Promise<void> {
    return this.task.runNow();
  }

  private async fanOut(): Promise<void> {
    const active = await this.webhooks.find({ disabledAt: null }).lean<WebhookDocument[]>().exec();
    for (const webhook of active) {
      if (this.task.isStopped) return;
      const tenant: Tenant = { kind: webhook.tenantKind, id: webhook.tenant };
      const events = await this.events.readNamespace(tenant, webhook.branch, {
        after: webhook.cursor,
        limit: FAN_OUT_BATCH,
        ...(webhook.collection !== undefined ? { collection: webhook.collection } : {}),
      });
      if (events.length === 0) continue;
      const now = new Date();
      for (const event of events) {
        if (!webhook.events.includes(event.type)) continue;
        const id = webhook._id.toHexString();
        // The id makes a second fan-out of the same event (another instance) a no-op.
        await orDuplicate(() =>
          this.deliveries.create({
            _id: `${id}:${event.seq}`,
            webhookId: id,
            tenantKind: webhook.tenantKind,
            tenant: webhook.tenant,
            eventId: String(event.seq),
            payload: JSON.stringify(EventDto.from(event)),
            status: 'pending',
            attempts: [],
            nextAttemptAt: now,
            leaseUntil: new Date(0),
            createdAt: now,
          }),
        );
      }
      await this.webhooks
        .updateOne(
          { _id: webhook._id, cursor: { $lt: events.at(-1)?.seq ?? 0 } },
          { $set: { cursor: events.at(-1)?.seq ?? webhook.cursor } },
        )
        .exec();
    }
  }

  private async sendDue(): Promise<void> {
    const now = new Date();
    // Claims of instances that died mid-attempt: their lease windows are long over.
    await this.claims
      .deleteMany({ createdAt: { $lt: new Date(now.getTime() - this.settings.retryWindowMs) } })
      .exec();
    const due = await this.deliveries
      .find({ status: 'pending', nextAttemptAt: { $lte: now }, leaseUntil: { $lte: now } })
      .sort({ nextAttemptAt: 1 })
      .limit(SEND_BATCH)
      .lean<DeliveryDocument[]>()
      .exec();
    await Promise.all(due.map((delivery) => this.attempt(delivery)));
  }

  private async attempt(delivery: DeliveryDocument): Promise<void> {
    const leaseMs = this.settings.timeoutMs * 2;
    const window = Math.floor(Date.now() / leaseMs);
    const claimId = `${delivery._id}:${delivery.attempts.length + 1}:${window}`;
    const claimed = await orDuplicate(() =>
      this.claims.create({ _id: claimId, createdAt: new Date() }),
    );
    if (claimed === DUPLICATE) return;
    // Read again under the claim: another instance may have finished this attempt already.
    const current = await this.deliveries.findById(delivery._id).lean<DeliveryDocument>().exec();
    if (current?.status !== 'pending' || current.attempts.length !== delivery.attempts.length)
      return;
    await this.deliveries
      .updateOne({ _id: delivery._id }, { $set: { leaseUntil: new Date(Date.now() + leaseMs) } })
      .exec();
    const webhook = await this.webhooks.findById(delivery.webhookId).lean<WebhookDocument>().exec();
    if (!webhook || webhook.disabledAt !== null) {
      await this.deliveries.updateOne({ _id: delivery._id }, { $set: { status: 'failed' } }).exec();
      return;
    }
    const attempt = await postDelivery(webhook, delivery, this.settings);
    const ok = attempt.status !== undefined && attempt.status >= 200 && attempt.status < 300;
    const tries = delivery.attempts.length + 1;
    const expired = Date.now() - delivery.createdAt.getTime() >= this.settings.retryWindowMs;
    const backoff = Math.min(this.settings.retryBaseMs * 2 ** (tries - 1), MAX_RETRY_MS);
    await this.deliveries
      .updateOne(
        { _id: delivery._id },
        {
          $push: { attempts: attempt },
          $set: {
            status: ok ? 'delivered' : expired ? 'failed' : 'pending',
            nextAttemptAt: new Date(Date.now() + backoff),
            leaseUntil: new Date(0),
          },
        },
      )
      .exec();
    // The claim stays (swept after the retry window): deleting it would let an instance that
    // read the delivery as due before this attempt claim the same attempt again.
    await this.recordHealth(webhook, ok);
  }

  /** A success clears the endpoint's failure; failing for the whole window disables it. */
  private async recordHealth(webhook: WebhookDocument, ok: boolean): Promise<void> {
    if (ok) {
      if (webhook.failingSince !== null)
        await this.webhooks
          .updateOne({ _id: webhook._id }, { $set: { failingSince: null } })
          .exec();
      return;
    }
    const since = webhook.failingSince ?? new Date();
    const disable = Date.now() - since.getTime() >= this.settings.retryWindowMs;
    await this.webhooks
      .updateOne(
        { _id: webhook._id },
        { $set: { failingSince: since, ...(disable ? { disabledAt: new Date() } : {}) } },
      )
      .exec();
    if (disable) this.logger.warn({ webhook: webhook._id.toHexString() }, 'webhook disabled');
  }
}
