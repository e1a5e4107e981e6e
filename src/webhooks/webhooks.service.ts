import { Inject, Injectable } from '@nestjs/common';
import { Types } from 'mongoose';
import {
  checkCollectionAccess,
  grantOf,
  readableBy,
  tenantOf,
  type CustomerPrincipal,
  type Tenant,
} from '../auth';
import { hasScope } from '../auth/access-grant';
import { CollectionNotAllowedError, InsufficientScopeError } from '../auth/auth.errors';
import { ValidationFailedError } from '../common/errors';
import { APP_CONFIG, type AppConfig } from '../config';
import { EVENT_RESOURCES, type EventResource, type EventType } from '../events/event.schema';
import { DATA_SCOPE_OF_EVENT, EventsService, namespaceOfPrincipal } from '../events';
import type { SyncResult } from '../common/mongo/document-sync';
import { limitRefusal, TenantLimits } from '../plans';
import { DeliveriesRepository } from './deliveries.repository';
import { WebhookDeliveries, type OwnersLost } from './webhook-deliveries';
import { resolveProblem, urlProblem } from './webhook-url';
import { isWebhookSecret, newWebhookSecret } from './webhook-signature';
import type { Delivery, Webhook } from './webhook.schema';
import { WebhookNotFoundError, WebhookQuotaExceededError } from './webhooks.errors';
import { WebhooksRepository } from './webhooks.repository';
import { WebhookSlotsRepository } from './webhook-slots.repository';

export interface NewWebhook {
  url: string;
  events: EventType[];
  collection?: string;
  secret?: string;
}

/**
 * Webhooks: endpoints that receive a namespace's events as signed POSTs (Standard Webhooks),
 * delivered by WebhookDeliveries.
 */
@Injectable()
export class WebhooksService {
  private readonly settings: AppConfig['webhooks'];

  constructor(
    private readonly webhooks: WebhooksRepository,
    private readonly deliveries: DeliveriesRepository,
    private readonly sender: WebhookDeliveries,
    private readonly events: EventsService,
    private readonly slots: WebhookSlotsRepository,
    private readonly limits: TenantLimits,
    @Inject(APP_CONFIG) config: AppConfig,
  ) {
    this.settings = config.webhooks;
  }

  /**
   * Registers an endpoint for the caller's namespace; it receives the events from now on. Within
   * the tenant's `webhooks` limit per namespace exactly, under any concurrency: the webhook is
   * inserted only after it holds a slot below the limit (WebhookSlotsRepository); a refusal
   * inserts nothing.
   */
  async create(
    principal: CustomerPrincipal,
    input: NewWebhook,
  ): Promise<{ webhook: Webhook; secret: string }> {
    // A key limited to collections makes webhooks of its collections only: one without
    // `collection` would carry every collection's events.
    if (input.collection !== undefined) checkCollectionAccess(principal, input.collection, 'read');
    else if (readableBy(principal)) throw new CollectionNotAllowedError(null, 'read');
    // Deliveries carry the data of what they report: the key must read it. A webhook of one
    // collection reports its items and the collection; one without, everything of the namespace.
    const resources: EventResource[] =
      input.collection !== undefined ? ['item', 'collection'] : [...EVENT_RESOURCES];
    const grant = grantOf(principal);
    for (const resource of resources) {
      const scope = DATA_SCOPE_OF_EVENT[resource];
      if (!hasScope(grant, scope))
        throw new InsufficientScopeError(scope, `A webhook delivering ${resource} events`);
    }
    const problem =
      urlProblem(input.url) ?? (await resolveProblem(input.url, this.settings.allowPrivate));
    if (problem) throw new ValidationFailedError([{ field: 'url', message: problem }]);
    if (input.secret !== undefined && !isWebhookSecret(input.secret))
      throw new ValidationFailedError([
        { field: 'secret', message: 'must be whsec_ followed by base64 of 24 to 64 bytes' },
      ]);
    const namespace = namespaceOfPrincipal(principal);
    const active = await this.limits.of(tenantOf(principal));
    const max = active.limits.webhooks ?? Infinity;
    const secret = input.secret ?? newWebhookSecret();
    const registration = {
      url: input.url,
      events: [...new Set(input.events)],
      ...(input.collection !== undefined ? { collection: input.collection } : {}),
      secret,
      cursor: await this.events.latest(tenantOf(principal), principal.branch),
    };
    const id = new Types.ObjectId();
    if (!(await this.slots.claim(namespace, id, max)))
      throw limitRefusal(
        active,
        { limit: 'webhooks', max, usage: await this.slots.heldIn(namespace) },
        (members) => new WebhookQuotaExceededError(members),
      );
    try {
      return { webhook: await this.webhooks.create(namespace, id, registration), secret };
    } catch (error) {
      await this.slots.release(namespace, id);
      throw error;
    }
  }

  /**
   * How many webhooks the caller's namespace has (GET /me's usage): the slots held, what the
   * limit counts; a key limited to collections counts those of its collections only, as it lists
   * them.
   */
  async countVisible(principal: CustomerPrincipal): Promise<number> {
    if (!readableBy(principal)) return this.slots.heldIn(namespaceOfPrincipal(principal));
    return (await this.list(principal)).length;
  }

  /** The caller's webhooks; a key limited to collections sees those of its collections only. */
  async list(principal: CustomerPrincipal): Promise<Webhook[]> {
    const all = await this.webhooks.listIn(namespaceOfPrincipal(principal));
    return all.filter((webhook) => reaches(principal, webhook));
  }

  /**
   * Whether the caller may see or remove webhook `id` (its deliveries carry its events): for a
   * key limited to collections, one of its collections' (else as if there were none).
   */
  private async reachable(principal: CustomerPrincipal, id: string): Promise<boolean> {
    if (!readableBy(principal)) return this.webhooks.existsIn(namespaceOfPrincipal(principal), id);
    const all = await this.webhooks.listIn(namespaceOfPrincipal(principal));
    return all.some((webhook) => webhook.id === id && reaches(principal, webhook));
  }

  /** A tenant's webhooks in every branch, by branch then age (an account export). */
  listOfTenant(tenant: Tenant): Promise<Webhook[]> {
    return this.webhooks.listOfTenant(tenant);
  }

  async remove(principal: CustomerPrincipal, id: string): Promise<void> {
    if (readableBy(principal) && !(await this.reachable(principal, id)))
      throw new WebhookNotFoundError(id);
    const namespace = namespaceOfPrincipal(principal);
    if (!(await this.webhooks.deleteIn(namespace, id))) throw new WebhookNotFoundError(id);
    await this.slots.release(namespace, new Types.ObjectId(id));
    await this.deliveries.deleteForWebhook(tenantOf(principal), id);
  }

  /** The newest deliveries of one of the caller's webhooks, with their attempts. */
  async deliveriesOf(principal: CustomerPrincipal, id: string, limit: number): Promise<Delivery[]> {
    if (!(await this.reachable(principal, id))) throw new WebhookNotFoundError(id);
    return this.deliveries.listForWebhook(tenantOf(principal), id, limit);
  }

  /** Deletes a tenant's webhooks and deliveries in every branch (an erasure). */
  async eraseTenant(tenant: Tenant): Promise<void> {
    await this.deliveries.deleteTenant(tenant);
    await this.webhooks.deleteTenant(tenant);
    await this.slots.deleteTenant(tenant);
  }

  /** Copies the tenant's deliveries to another cluster database (a move, see TenantFeedMove). */
  copyDeliveries(tenant: Tenant, move: { from: string | null; to: string }): Promise<SyncResult> {
    return this.deliveries.copyTenant(tenant, move);
  }

  /** Removes the tenant's deliveries from a cluster database it moved away from. */
  removeDeliveriesFrom(tenant: Tenant, cluster: string | null): Promise<void> {
    return this.deliveries.deleteTenantIn(tenant, cluster);
  }

  /** Tells the deliveries which webhook owners lost their rights (the lifecycle module). */
  registerOwnerCheck(check: OwnersLost): void {
    this.sender.registerOwnerCheck(check);
  }

  /** One round now: fan out new events, send what is due (also every EVENTS_POLL_MS). */
  runNow(): Promise<void> {
    return this.sender.runNow();
  }
}

/** Whether a webhook's events are within what the principal's key may read. */
function reaches(principal: CustomerPrincipal, webhook: Webhook): boolean {
  const readable = readableBy(principal);
  return !readable || (webhook.collection !== undefined && readable(webhook.collection));
}
