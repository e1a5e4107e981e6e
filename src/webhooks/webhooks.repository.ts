import { Injectable } from '@nestjs/common';
import { InjectModel } from '@nestjs/mongoose';
import { Types, type Model } from 'mongoose';
import { isObjectIdHex } from '../common/mongo/object-id';
import {
  namespaceFilter,
  tenantFilter,
  type Namespace,
  type Tenant,
} from '../common/tenancy/namespace';
import type { EventType } from '../events/event.schema';
import { WebhookDocument, type Webhook } from './webhook.schema';

/** What a new endpoint is registered with. */
export interface WebhookRegistration {
  url: string;
  events: EventType[];
  collection?: string;
  secret: string;
  /** The newest event of the namespace: the endpoint receives the ones after it. */
  cursor: number;
}

function toWebhook({ _id, ...webhook }: WebhookDocument): Webhook {
  return { id: _id.toHexString(), ...webhook };
}

/** The filter of one webhook of a namespace; null when `id` cannot be a webhook's id. */
function ownedById(namespace: Namespace, id: string) {
  return isObjectIdHex(id) ? { _id: new Types.ObjectId(id), ...namespaceFilter(namespace) } : null;
}

/** The `webhooks` collection: the endpoints of every namespace. */
@Injectable()
export class WebhooksRepository {
  constructor(
    @InjectModel(WebhookDocument.name) private readonly webhooks: Model<WebhookDocument>,
  ) {}

  /** Inserts a webhook under `id` (the id its slot was claimed for). */
  async create(
    namespace: Namespace,
    id: Types.ObjectId,
    webhook: WebhookRegistration,
  ): Promise<Webhook> {
    const created = await this.webhooks.create({
      _id: id,
      ...namespaceFilter(namespace),
      url: webhook.url,
      events: webhook.events,
      ...(webhook.collection !== undefined ? { collection: webhook.collection } : {}),
      secret: webhook.secret,
      cursor: webhook.cursor,
      failingSince: null,
      disabledAt: null,
      createdAt: new Date(),
    });
    return toWebhook(created.toObject<WebhookDocument>());
  }

  /** A namespace's webhooks, oldest first. */
  async listIn(namespace: Namespace): Promise<Webhook[]> {
    const docs = await this.webhooks
      .find(namespaceFilter(namespace))
      .sort({ createdAt: 1 })
      .lean<WebhookDocument[]>()
      .exec();
    return docs.map(toWebhook);
  }

  /** A tenant's webhooks in every branch, by branch then age (an account export). */
  async listOfTenant(tenant: Tenant): Promise<Webhook[]> {
    const docs = await this.webhooks
      .find(tenantFilter(tenant))
      .sort({ branch: 1, createdAt: 1, _id: 1 })
      .lean<WebhookDocument[]>()
      .exec();
    return docs.map(toWebhook);
  }

  /** Deletes one of a namespace's webhooks; false when it has none with that id. */
  async deleteIn(namespace: Namespace, id: string): Promise<boolean> {
    const filter = ownedById(namespace, id);
    if (!filter) return false;
    const gone = await this.webhooks.deleteOne(filter).exec();
    return gone.deletedCount === 1;
  }

  async existsIn(namespace: Namespace, id: string): Promise<boolean> {
    const filter = ownedById(namespace, id);
    return filter !== null && (await this.webhooks.exists(filter).exec()) !== null;
  }

  /** Every webhook not disabled, over all namespaces (the fan-out's work). */
  async findActive(): Promise<Webhook[]> {
    const docs = await this.webhooks.find({ disabledAt: null }).lean<WebhookDocument[]>().exec();
    return docs.map(toWebhook);
  }

  async findById(id: string): Promise<Webhook | null> {
    const doc = await this.webhooks.findById(id).lean<WebhookDocument>().exec();
    return doc && toWebhook(doc);
  }

  /** Moves the webhook's cursor forward to `seq` (never back: another instance may be ahead). */
  async advanceCursor(id: string, seq: number): Promise<void> {
    await this.webhooks
      .updateOne({ _id: new Types.ObjectId(id), cursor: { $lt: seq } }, { $set: { cursor: seq } })
      .exec();
  }

  async clearFailing(id: string): Promise<void> {
    await this.webhooks
      .updateOne({ _id: new Types.ObjectId(id) }, { $set: { failingSince: null } })
      .exec();
  }

  /** Records since when the endpoint fails, and disables it with `disable`. */
  async markFailing(id: string, since: Date, disable: boolean): Promise<void> {
    await this.webhooks
      .updateOne(
        { _id: new Types.ObjectId(id) },
        { $set: { failingSince: since, ...(disable ? { disabledAt: new Date() } : {}) } },
      )
      .exec();
  }

  /** Deletes a tenant's webhooks in every branch. */
  async deleteTenant(tenant: Tenant): Promise<void> {
    await this.webhooks.deleteMany(tenantFilter(tenant)).exec();
  }
}
