import { Injectable } from '@nestjs/common';
import { InjectModel } from '@nestjs/mongoose';
import type { Model } from 'mongoose';
import { orDuplicate } from '../common/mongo/duplicate';
import { tenantFilter, type Tenant } from '../common/tenancy/namespace';
import { DeliveryDocument, type Delivery, type DeliveryAttempt } from './webhook.schema';

/** A delivery to store: one event for one webhook, due now. */
export interface NewDelivery {
  webhookId: string;
  tenant: Tenant;
  eventId: string;
  payload: string;
}

function toDelivery({ _id, ...delivery }: DeliveryDocument): Delivery {
  return { id: _id, ...delivery };
}

/** The `webhook_deliveries` collection: every event owed to an endpoint, and its attempts. */
@Injectable()
export class DeliveriesRepository {
  constructor(
    @InjectModel(DeliveryDocument.name) private readonly deliveries: Model<DeliveryDocument>,
  ) {}

  /**
   * Stores a pending delivery under `<webhook id>:<event id>`, which makes a second fan-out of
   * the same event (another instance) a no-op.
   */
  async insertOnce(delivery: NewDelivery, now: Date): Promise<void> {
    await orDuplicate(() =>
      this.deliveries.create({
        _id: `${delivery.webhookId}:${delivery.eventId}`,
        webhookId: delivery.webhookId,
        ...tenantFilter(delivery.tenant),
        eventId: delivery.eventId,
        payload: delivery.payload,
        status: 'pending',
        attempts: [],
        nextAttemptAt: now,
        leaseUntil: new Date(0),
        createdAt: now,
      }),
    );
  }

  /** Pending deliveries due by `now` that no instance holds, the longest due first. */
  async findDue(now: Date, limit: number): Promise<Delivery[]> {
    const docs = await this.deliveries
      .find({ status: 'pending', nextAttemptAt: { $lte: now }, leaseUntil: { $lte: now } })
      .sort({ nextAttemptAt: 1 })
      .limit(limit)
      .lean<DeliveryDocument[]>()
      .exec();
    return docs.map(toDelivery);
  }

  async findById(id: string): Promise<Delivery | null> {
    const doc = await this.deliveries.findById(id).lean<DeliveryDocument>().exec();
    return doc && toDelivery(doc);
  }

  /** A webhook's newest deliveries, with their attempts. */
  async listForWebhook(webhookId: string, limit: number): Promise<Delivery[]> {
    const docs = await this.deliveries
      .find({ webhookId })
      .sort({ createdAt: -1, _id: -1 })
      .limit(limit)
      .lean<DeliveryDocument[]>()
      .exec();
    return docs.map(toDelivery);
  }

  /** Holds the delivery for this instance until `until`. */
  async lease(id: string, until: Date): Promise<void> {
    await this.deliveries.updateOne({ _id: id }, { $set: { leaseUntil: until } }).exec();
  }

  async markFailed(id: string): Promise<void> {
    await this.deliveries.updateOne({ _id: id }, { $set: { status: 'failed' } }).exec();
  }

  /** Adds an attempt, sets the outcome and the next attempt's time, and releases the lease. */
  async recordAttempt(
    id: string,
    attempt: DeliveryAttempt,
    status: DeliveryDocument['status'],
    nextAttemptAt: Date,
  ): Promise<void> {
    await this.deliveries
      .updateOne(
        { _id: id },
        {
          $push: { attempts: attempt },
          $set: { status, nextAttemptAt, leaseUntil: new Date(0) },
        },
      )
      .exec();
  }

  async deleteForWebhook(webhookId: string): Promise<void> {
    await this.deliveries.deleteMany({ webhookId }).exec();
  }

  /** Deletes a tenant's deliveries in every branch. */
  async deleteTenant(tenant: Tenant): Promise<void> {
    await this.deliveries.deleteMany(tenantFilter(tenant)).exec();
  }
}
