import type { CustomerPrincipal } from '../auth';
import type { FeedEvent } from './event-scope';
import { priorOf } from './item-images';
import type { LiveFilter } from './live-filter';
import { eventAccessOf } from './event-access';
import { eventView, liveEventOf } from './live-query';

const root: CustomerPrincipal = {
  kind: 'root',
  credential: { kind: 'key', keyId: 'k', expiresAt: null },
  subject: 's',
  branch: '',
  boundBranch: null,
};
const sub: CustomerPrincipal = {
  kind: 'sub',
  credential: { kind: 'key', keyId: 'k2', expiresAt: null },
  subject: 's',
  clientId: 'c',
  accountId: 'me',
  profileId: 'p',
  branch: '',
  boundBranch: null,
};

/** status = open; projects `status` and `_id`. */
const openOnly: LiveFilter = {
  named: [],
  matches: (item) => item.status === 'open',
  project: (item) => ({ _id: item._id, status: item.status }),
};

function change(
  type: FeedEvent['type'],
  before: Record<string, unknown> | null,
  after: Record<string, unknown> | null,
  owners: { owner?: string | null; formerOwner?: string | null } = {},
): FeedEvent {
  const prior = priorOf(before, after);
  return {
    seq: 7,
    type,
    resource: 'item',
    collection: 'orders',
    key: 'i1',
    branch: '',
    at: new Date(0),
    actor: { kind: 'root', id: 's' },
    owner: owners.owner ?? null,
    data: after,
    ...(prior ? { prior } : {}),
    ...(owners.formerOwner !== undefined ? { formerOwner: owners.formerOwner } : {}),
  };
}

const open = { _id: 'i1', status: 'open', total: 1 };
const closed = { _id: 'i1', status: 'closed', total: 1 };

describe('liveEventOf', () => {
  const typeOf = (event: FeedEvent, principal: CustomerPrincipal = root) =>
    liveEventOf(event, openOnly, eventAccessOf(principal, null))?.type ?? null;

  it('judges each change by the item before and after it', () => {
    expect(typeOf(change('created', null, open))).toBe('created');
    expect(typeOf(change('created', null, closed))).toBeNull();
    expect(typeOf(change('updated', open, { ...open, total: 2 }))).toBe('updated');
    expect(typeOf(change('updated', closed, open))).toBe('entered');
    expect(typeOf(change('updated', open, closed))).toBe('left');
    expect(typeOf(change('updated', closed, { ...closed, total: 2 }))).toBeNull();
    expect(typeOf(change('deleted', open, null))).toBe('deleted');
    expect(typeOf(change('deleted', closed, null))).toBeNull();
  });

  it('carries the item as it is now, projected, on entered and left; nothing on deleted', () => {
    expect(liveEventOf(change('updated', open, closed), openOnly, null)?.data).toEqual({
      _id: 'i1',
      status: 'closed',
    });
    expect(liveEventOf(change('deleted', open, null), openOnly, null)?.data).toBeNull();
  });

  it("counts an item for a sub key only while it is the key's own", () => {
    const mine = { owner: 'me' };
    expect(typeOf(change('updated', open, open, mine), sub)).toBe('updated');
    expect(typeOf(change('created', null, open, { owner: 'other' }), sub)).toBeNull();
    const given = change('updated', open, open, { owner: 'other', formerOwner: 'me' });
    expect(liveEventOf(given, openOnly, eventAccessOf(sub, null))).toMatchObject({
      type: 'left',
      data: null,
    });
    const taken = change('updated', open, open, { owner: 'me', formerOwner: 'other' });
    expect(typeOf(taken, sub)).toBe('entered');
    const claimed = change('updated', open, open, { owner: 'me', formerOwner: null });
    expect(typeOf(claimed, sub)).toBe('entered');
    expect(typeOf(change('deleted', open, null, { owner: 'other' }), sub)).toBeNull();
  });

  it('judges an update without a prior by the item after alone', () => {
    const bare = change('updated', null, open);
    expect(typeOf(bare)).toBe('updated');
    expect(typeOf(change('updated', null, closed))).toBe('left');
  });

  it('passes the collection events and drops the others', () => {
    const dropped: FeedEvent = { ...change('deleted', null, null), resource: 'collection' };
    expect(typeOf(dropped)).toBe('deleted');
    expect(typeOf({ ...change('updated', null, open), resource: 'project' })).toBeNull();
  });
});

describe('eventView', () => {
  it('keeps only the live type asked for', () => {
    const view = eventView(root, { live: { filter: openOnly, type: 'left' } }, null);
    expect(view(change('updated', open, closed))?.type).toBe('left');
    expect(view(change('updated', closed, open))).toBeNull();
  });

  it('shows an unfiltered feed as it is', () => {
    const event = change('updated', closed, closed);
    expect(eventView(root, {}, null)(event)).toEqual({
      event,
      type: 'updated',
      data: closed,
    });
  });
});
