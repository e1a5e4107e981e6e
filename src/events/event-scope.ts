import type { QueryFilter } from 'mongoose';
import sift from 'sift';
import {
  collectionNameFilter,
  collectionPatternsOf,
  tenantOf,
  type CustomerPrincipal,
  type Tenant,
} from '../auth';
import type { Namespace } from '../common/tenancy/namespace';
import type { PlannedChange } from './event-intent.schema';
import type { ItemPrior } from './item-images';
import type {
  EventActor,
  EventDocument,
  EventResource,
  EventType,
  LiveEventType,
} from './event.schema';
import type { LiveFilter } from './live-filter';
import { limitedByRules } from './item-access';

// The feed's vocabulary: scopes, queries and events, and who may see what.

/** Where a change happened and who made it. */
export interface ChangeScope {
  tenant: Tenant;
  branch: string;
  actor: EventActor;
}

/** A change as recorded: what was planned, with its owner and the resource after it. */
export interface RecordedChange extends PlannedChange {
  owner: string | null;
  data: Record<string, unknown> | null;
  /** Item updates and deletions: what the item was (item-images.ts). */
  prior?: ItemPrior;
  /** An item update that changed the owner: the owner before it (null: it had none). */
  formerOwner?: string | null;
}

/**
 * What the module that owns a resource answers the reconciler: the resource as it is now (null
 * when it does not exist), with its owner.
 */
export type ResourceLookup = (
  scope: { tenant: Tenant; branch: string },
  change: PlannedChange,
) => Promise<{ owner: string | null; data: Record<string, unknown> } | null>;

export interface EventQuery {
  after: number;
  limit: number;
  collection?: string;
  type?: EventType;
  resource?: EventResource;
  /** Only events up to this number (a reader catching up to a tail). */
  through?: number;
  /**
   * Whether the cursor is checked against retention (410 when older than the oldest event
   * kept). A stream checks once, when it opens; its later cursors are its own progress.
   */
  checkExpiry?: boolean;
  /**
   * A live query (an item filter): the events are judged by liveEventOf, and `type` is the type
   * it sends (so it is not a filter on the stored type).
   */
  live?: { filter: LiveFilter; type?: LiveEventType };
}

export interface FeedEvent {
  seq: number;
  type: EventType;
  resource: EventResource;
  collection?: string;
  key: string;
  branch: string;
  at: Date;
  actor: EventActor;
  /** The item's owner value or the profile's id (what a sub key's visibility looks at). */
  owner: string | null;
  data: Record<string, unknown> | null;
  /** Item updates and deletions: what the item was (absent: not recorded, e.g. by the reconciler). */
  prior?: ItemPrior;
  /** An item update that changed the owner: the owner before it (null: it had none). */
  formerOwner?: string | null;
}

export function actorOf(principal: CustomerPrincipal): EventActor {
  switch (principal.kind) {
    case 'root':
      return { kind: 'root', id: principal.subject };
    case 'sub':
      return { kind: 'sub', id: principal.accountId };
    case 'team':
      return { kind: 'team', id: principal.actingSubject ?? principal.teamId };
    case 'publishable':
      // Every write route refuses a publishable key, so it never acts in an event; reads take a
      // change scope too (a feed position), named after the tenant it reads.
      return principal.tenant.kind === 'team'
        ? { kind: 'team', id: principal.tenant.id }
        : { kind: 'root', id: principal.tenant.id };
  }
}

export function changeScopeOf(principal: CustomerPrincipal): ChangeScope {
  return { tenant: tenantOf(principal), branch: principal.branch, actor: actorOf(principal) };
}

/** The namespace of a scope (a change's, a lookup's). */
export function namespaceIn(scope: { tenant: Tenant; branch: string }): Namespace {
  return { kind: scope.tenant.kind, id: scope.tenant.id, branch: scope.branch };
}

/** The namespace a principal's requests work in. */
export function namespaceOfPrincipal(principal: CustomerPrincipal): Namespace {
  return { ...tenantOf(principal), branch: principal.branch };
}

/** The events a query's filters select (beyond its cursor). */
export function queryFilter(query: EventQuery): QueryFilter<EventDocument> {
  return {
    ...(query.collection !== undefined ? { collection: query.collection } : {}),
    ...(query.type !== undefined && !query.live ? { type: query.type } : {}),
    ...(query.resource !== undefined ? { resource: query.resource } : {}),
  };
}

/**
 * What a principal may see of its namespace's feed, as the database selects it: root and team
 * keys all of it; a sub key the items it owns, the item events of the collections in `wider`
 * (whose read rule is not `own`: judged in memory by EventAccess), the collections, and its own
 * profile (never projects, never other owners); a key limited to collections nothing of the
 * others.
 */
export function visibleTo(
  principal: CustomerPrincipal,
  query?: EventQuery,
  wider: readonly string[] = [],
): QueryFilter<EventDocument> {
  const own = visibleOwnTo(principal, query, wider);
  const limit = collectionLimit(principal);
  if (!limit) return own;
  return Object.keys(own).length === 0 ? limit : { $and: [own, limit] };
}

/**
 * A key limited to collections sees no event of another collection (the events without a
 * collection — profiles, files, projects — are its kind's to see); null without a limit.
 */
function collectionLimit(principal: CustomerPrincipal): QueryFilter<EventDocument> | null {
  const patterns = collectionPatternsOf(principal);
  if (!patterns) return null;
  const named = collectionNameFilter('collection', patterns);
  return { $or: [{ collection: { $exists: false } }, ...named.$or] };
}

/** Root and team keys see all of the namespace's feed; a sub key what visibleTo says. */
function visibleOwnTo(
  principal: CustomerPrincipal,
  query: EventQuery | undefined,
  wider: readonly string[],
): QueryFilter<EventDocument> {
  if (!limitedByRules(principal)) return {};
  const judged =
    wider.length > 0 ? [{ resource: 'item' as const, collection: { $in: [...wider] } }] : [];
  // A key without an account (a publishable key) sees items only by the rules, and collections.
  if (principal.kind !== 'sub') return { $or: [...judged, { resource: 'collection' }] };
  // A live query also judges the updates that took an item away from the key (its `left`).
  if (query?.live)
    return {
      $or: [
        { resource: 'item', owner: principal.accountId },
        { resource: 'item', formerOwner: principal.accountId },
        ...judged,
        { resource: 'collection' },
      ],
    };
  return {
    $or: [
      { resource: 'item', owner: principal.accountId },
      ...judged,
      { resource: 'collection' },
      { resource: 'profile', owner: principal.profileId },
      { resource: 'file', owner: principal.accountId },
    ],
  };
}

/**
 * The same selection as `queryFilter(query)` with `visibleTo(principal)`, tested in memory on
 * an event already read (a stream taking its events from a shared read of the feed): one
 * definition of visibility, evaluated by the database or here.
 */
export function eventMatcher(
  principal: CustomerPrincipal,
  query: EventQuery,
  wider: readonly string[] = [],
): (event: FeedEvent) => boolean {
  return sift<FeedEvent>({ ...queryFilter(query), ...visibleTo(principal, query, wider) } as never);
}
