import { grantOf, type CustomerPrincipal } from '../auth';
import { hasScope, type Scope } from '../auth/access-grant';
import type { EventAccess } from './event-access';
import type { EventQuery, FeedEvent } from './event-scope';
import { EVENT_RESOURCES, type EventResource, type LiveEventType } from './event.schema';
import { imageBefore } from './item-images';
import type { LiveFilter } from './live-filter';

/** An event as a live query sends it: its type from the filter's view, its data projected. */
export interface LiveEvent {
  event: FeedEvent;
  type: LiveEventType;
  data: Record<string, unknown> | null;
}

/**
 * How a live query sees an event of its namespace (null: not at all). Collection events pass as
 * they are (a dropped collection takes its items without an event each). An item event is
 * judged by the item before and after it, each counted only while the reader may read it (a sub
 * key: by its collection's read rule, `access`; root and team keys: always):
 * - matched neither before nor after: not sent;
 * - `created`, `deleted`: when the new item matches, when the deleted item matched;
 * - an update: `updated` (both), `entered` (after only), `left` (before only).
 * A `left` carries the item as it is now, projected — unless the reader may not read it any
 * more (another owner's item, or outside the read rule now), then none. An update whose earlier
 * image the feed does not hold (recorded by the reconciler after a crash) is `updated` when the
 * item matches, else `left` when the reader owned it: a client applying it converges either way.
 * Protected fields never reach the data.
 */
export function liveEventOf(
  event: FeedEvent,
  filter: LiveFilter,
  access: EventAccess | null,
): LiveEvent | null {
  if (event.resource === 'collection') return { event, type: event.type, data: event.data };
  if (event.resource !== 'item') return null;
  const after = event.type === 'deleted' ? null : event.data;
  const readsAfter = after !== null && (access === null || access.readsAfter(event));
  const readsBefore = (): boolean => access === null || access.readsBefore(event);
  const matchesAfter = readsAfter && filter.matches(after);
  const projected = (): Record<string, unknown> | null =>
    readsAfter ? filter.project(access ? access.strip(event, after) : after) : null;
  switch (event.type) {
    case 'created':
      return matchesAfter ? { event, type: 'created', data: projected() } : null;
    case 'deleted': {
      const gone = event.prior?.fields ?? null;
      const matched = readsBefore() && (gone === null || filter.matches(gone));
      return matched ? { event, type: 'deleted', data: null } : null;
    }
    case 'updated': {
      if (event.prior === undefined) {
        if (matchesAfter) return { event, type: 'updated', data: projected() };
        return readsBefore() ? { event, type: 'left', data: projected() } : null;
      }
      const before = imageBefore(event.data, event.prior);
      const matchedBefore = readsBefore() && filter.matches(before);
      if (matchedBefore && matchesAfter) return { event, type: 'updated', data: projected() };
      if (matchesAfter) return { event, type: 'entered', data: projected() };
      if (matchedBefore) return { event, type: 'left', data: projected() };
      return null;
    }
  }
}

/**
 * How a reader with this query sees each event it selected: as it is, or (a live query) as
 * liveEventOf judges it, kept when it is of the query's `type`.
 */
export function eventView(
  principal: CustomerPrincipal,
  query: Pick<EventQuery, 'live'>,
  access: EventAccess | null,
): (event: FeedEvent) => LiveEvent | null {
  const live = query.live;
  if (!live) {
    const readable = dataReadable(principal);
    return (event) => {
      if (access === null || event.resource !== 'item')
        return { event, type: event.type, data: readable(event) ? event.data : null };
      const seen = access.pageView(event);
      if (!seen) return null;
      return { event, type: event.type, data: readable(event) ? seen.data : null };
    };
  }
  return (event) => {
    const view = liveEventOf(event, live.filter, access);
    return view && (live.type === undefined || view.type === live.type) ? view : null;
  };
}

/**
 * The scope that reads what an event's data is an image of: the feed (`events:read`) says what
 * changed, and its data is shown only to a caller that may read the thing itself.
 */
export const DATA_SCOPE_OF_EVENT: Readonly<Record<EventResource, Scope>> = {
  item: 'data:read',
  collection: 'data:read',
  profile: 'profile:read',
  project: 'projects:read',
  file: 'files:read',
};

/** Whether the caller may see an event's data (else the event goes without it). */
function dataReadable(principal: CustomerPrincipal): (event: FeedEvent) => boolean {
  const grant = grantOf(principal);
  const held = new Set(EVENT_RESOURCES.filter((r) => hasScope(grant, DATA_SCOPE_OF_EVENT[r])));
  return (event) => held.has(event.resource);
}
