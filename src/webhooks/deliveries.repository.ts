import { Injectable } from '@nestjs/common';
import type { Collection, Document } from 'mongodb';
import type { SyncResult } from '../common/mongo/document-sync';
import { orDuplicate } from '../common/mongo/duplicate';
import { tenantFilter, type Tenant } from '../common/tenancy/namespace';
import { ClusterDatabases, onEveryCluster } from '../placement';
import {
  DeliverySchema,
  type Delivery,
  type DeliveryAttempt,
  type DeliveryDocument,
} from './webhook.schema';

/** A delivery to store: one event for one webhook, due now. */
export interface NewDelivery {
  webhookId: string;
  tenant: Tenant;
  eventId: string;
  payload: string;
}

/** A stored delivery and the cluster database that holds it. */
export type PlacedDelivery = Delivery & { cluster: string | null };

/** Where a delivery is: its id and its cluster database. */
export interface DeliveryRef {
  id: string;
  cluster: string | null;
}

const DELIVERIES = 'webhook_deliveries';

function toDelivery(doc: Document, cluster: string | null): PlacedDelivery {
  const { _id, ...delivery } = doc as DeliveryDocument;
  return { id: _id, ...delivery, cluster };
}

/**
 * The `webhook_deliveries` collections: every event owed to an endpoint, and its attempts, in
 * the cluster database of the webhook's tenant (ClusterDatabases), beside its change feed: a
 * delivery carries an event, which carries the tenant's data. Through the driver, since a model
 * is bound to the main database.
 */
@Injectable()
export class DeliveriesRepository {
  constructor(private readonly databases: ClusterDatabases) {}

  private at(cluster: string | null): Promise<Collection> {
    return this.databases.collection(cluster, DELIVERIES, DeliverySchema);
  }

  private async of(tenant: Tenant): Promise<Collection> {
    return this.at(await this.databases.clusterOf(tenant));
  }

  /**
   * Stores a pending delivery under `<webhook id>:<event id>`, which makes a second fan-out of
   * the same event (another instance) a no-op.
   */
  async insertOnce(delivery: NewDelivery, now: Date): Promise<void> {
    const deliveries = await this.of(delivery.tenant);
    await orDuplicate(() =>
      deliveries.insertOne({
        _id: `${delivery.webhookId}:${delivery.eventId}` as never,
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

  /**
   * Pending deliveries due by `now` that no instance holds, the longest due first: up to
   * `limit` of each cluster database, all read at once.
   */
  async findDue(now: Date, limit: number): Promise<PlacedDelivery[]> {
    const found = await onEveryCluster(
      this.databases.everywhere(DELIVERIES),
      async ({ cluster, collection }) =>
        (
          await collection
            .find({ status: 'pending', nextAttemptAt: { $lte: now }, leaseUntil: { $lte: now } })
            .sort({ nextAttemptAt: 1 })
            .limit(limit)
            .toArray()
        ).map((doc) => toDelivery(doc, cluster)),
    );
    return found.flat();
  }

  async findById(ref: DeliveryRef): Promise<PlacedDelivery | null> {
    const doc = await (await this.at(ref.cluster)).findOne({ _id: ref.id as never });
    return doc && toDelivery(doc, ref.cluster);
  }

  /** A webhook's newest deliveries, with their attempts. */
  async listForWebhook(tenant: Tenant, webhookId: string, limit: number): Promise<Delivery[]> {
    const cluster = await this.databases.clusterOf(tenant);
    const docs = await (
      await this.at(cluster)
    )
      .find({ webhookId })
      .sort({ createdAt: -1, _id: -1 })
      .limit(limit)
      .toArray();
    return docs.map((doc) => toDelivery(doc, cluster));
  }

  /** Holds the delivery for this instance until `until`. */
  async lease(ref: DeliveryRef, until: Date): Promise<void> {
    await (
      await this.at(ref.cluster)
    ).updateOne({ _id: ref.id as never }, { $set: { leaseUntil: until } });
  }

  async markFailed(ref: DeliveryRef): Promise<void> {
    await (
      await this.at(ref.cluster)
    ).updateOne({ _id: ref.id as never }, { $set: { status: 'failed' } });
  }

  /** Adds an attempt, sets the outcome and the next attempt's time, and releases the lease. */
  async recordAttempt(
    ref: DeliveryRef,
    attempt: DeliveryAttempt,
    status: DeliveryDocument['status'],
    nextAttemptAt: Date,
  ): Promise<void> {
    await (
      await this.at(ref.cluster)
    ).updateOne(
      { _id: ref.id as never },
      {
        $push: { attempts: attempt as never },
        $set: { status, nextAttemptAt, leaseUntil: new Date(0) },
      },
    );
  }

  async deleteForWebhook(tenant: Tenant, webhookId: string): Promise<void> {
    await (await this.of(tenant)).deleteMany({ webhookId });
  }

  /**
   * Makes the tenant's deliveries in the cluster database of `to` those of `from` (a move): a
   * delivery is the same when its status, attempts and times are.
   */
  copyTenant(tenant: Tenant, move: { from: string | null; to: string }): Promise<SyncResult> {
    const fingerprint = ['status', 'attempts', 'nextAttemptAt', 'leaseUntil'];
    return this.databases.copyTenant(DELIVERIES, DeliverySchema, tenant, move, fingerprint);
  }

  /** Deletes the tenant's deliveries in one cluster database (a moved tenant's source). */
  deleteTenantIn(tenant: Tenant, cluster: string | null): Promise<void> {
    return this.databases.deleteTenantIn(DELIVERIES, tenant, cluster);
  }

  /** Deletes a tenant's deliveries in every branch, in every cluster database. */
  deleteTenant(tenant: Tenant): Promise<void> {
    return this.databases.deleteTenantEverywhere(DELIVERIES, tenant);
  }
}
