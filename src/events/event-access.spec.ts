import type { CustomerPrincipal } from '../auth';
import { eventAccessOf } from './event-access';
import type { FeedEvent } from './event-scope';
import type { ItemAccessSource, ItemReadAccess } from './item-access';
import { priorOf } from './item-images';

const sub: CustomerPrincipal = {
  kind: 'sub',
  credential: { kind: 'key', keyId: 'k', expiresAt: null },
  subject: 's',
  clientId: 'c',
  accountId: 'me',
  profileId: 'p',
  branch: '',
  boundBranch: null,
};

/** A read rule `status = published` hiding `cost`, or `own`. */
function rule(tag: string, readable: (item: Record<string, unknown>) => boolean): ItemReadAccess {
  return {
    tag,
    byOwner: tag === 'own',
    readable,
    strip: ({ cost: _cost, ...rest }) => rest,
    refuseProtected: () => undefined,
  };
}
const published = rule('published', (item) => item.status === 'published');
const featured = rule('featured', (item) => item.featured === true);

function sourceOf(current: { access: ItemReadAccess }): ItemAccessSource {
  return {
    of: () => Promise.resolve(current.access),
    widerThanOwn: () => Promise.resolve(current.access.byOwner ? [] : ['c']),
  };
}

function change(
  type: FeedEvent['type'],
  before: Record<string, unknown> | null,
  after: Record<string, unknown> | null,
  owner: string | null = 'other',
): FeedEvent {
  const prior = priorOf(before, after);
  return {
    seq: 1,
    type,
    resource: 'item',
    collection: 'c',
    key: 'i',
    branch: '',
    at: new Date(0),
    actor: { kind: 'root', id: 's' },
    owner,
    data: after,
    ...(prior ? { prior } : {}),
  };
}

const pub = { _id: 'i', status: 'published', cost: 3 };
const draft = { _id: 'i', status: 'draft', cost: 3 };

describe('EventAccess', () => {
  it('shows what the read rule reads before or after, without protected fields', async () => {
    const access = eventAccessOf(sub, sourceOf({ access: published }), 'c');
    const events = [
      change('created', null, pub),
      change('created', null, draft),
      change('updated', pub, draft),
      change('updated', draft, draft),
      change('deleted', pub, null),
      change('deleted', draft, null),
    ];
    await access?.prepareRead();
    await access?.prepare(events);
    expect(access?.wider).toEqual(['c']);
    expect(events.map((e) => access?.pageView(e) ?? 'hidden')).toEqual([
      { data: { _id: 'i', status: 'published' } },
      'hidden',
      { data: null },
      'hidden',
      { data: null },
      'hidden',
    ]);
  });

  it('judges an own rule by the owner, as the database selects', async () => {
    const access = eventAccessOf(sub, sourceOf({ access: rule('own', () => false) }), 'c');
    const events = [change('created', null, pub, 'me'), change('created', null, pub, 'other')];
    await access?.prepareRead();
    await access?.prepare(events);
    expect(access?.wider).toEqual([]);
    expect(events.map((e) => access?.pageView(e) ?? 'hidden')).toEqual([
      { data: { _id: 'i', status: 'published' } },
      'hidden',
    ]);
  });

  it('counts an item readable before under a rule it judged by earlier', async () => {
    const current = { access: published };
    const access = eventAccessOf(sub, sourceOf(current), 'c');
    const first = change('created', null, pub);
    await access?.prepare([first]);
    current.access = featured;
    const next = change('updated', pub, { ...pub, cost: 4 });
    await access?.prepare([next]);
    expect(access?.readsBefore(next)).toBe(true);
    expect(access?.readsAfter(next)).toBe(false);
    // A reader that never judged by the looser rule does not count it.
    const fresh = eventAccessOf(sub, sourceOf(current), 'c');
    await fresh?.prepare([next]);
    expect(fresh?.readsBefore(next)).toBe(false);
  });

  it('does not limit root keys', () => {
    const root: CustomerPrincipal = {
      kind: 'root',
      credential: { kind: 'key', keyId: 'k', expiresAt: null },
      subject: 's',
      branch: '',
      boundBranch: null,
    };
    expect(eventAccessOf(root, sourceOf({ access: published }))).toBeNull();
  });
});
