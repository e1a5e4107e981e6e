import { createTestApp, nativeCollection, type TestApp } from '../support/app';
import { createSubKey, createUser, type TestSubProfile, type TestUser } from '../support/factories';

/**
 * Sorting by several fields with exact keyset walks, and projections (`fields`) on lists and
 * single items, against the real database.
 */
let t: TestApp;
let user: TestUser;
let sub: TestSubProfile;

const WALK_ITEMS = 2000;

type Item = Record<string, unknown> & { _id: string };
const linkOf = (header: string | undefined) => /<([^>]+)>; rel="next"/.exec(header ?? '')?.[1];

beforeAll(async () => {
  t = await createTestApp(__filename);
  user = await createUser(t);
  sub = await createSubKey(t, user);
  // The walk's items are written straight into the collection's physical collection (set-up,
  // not the route under test): the first item creates the collection through the API.
  await t
    .http()
    .post('/data/walk')
    .set('X-Api-Key', user.apiKey)
    .send({ item: { _id: 'w0000', a: 0, b: 0 } })
    .expect(200);
  const entry = await t.connection.collection('data_collections').findOne({ name: 'walk' });
  const now = new Date();
  const docs = Array.from({ length: WALK_ITEMS - 1 }, (_, i) => ({
    _id: `w${String(i + 1).padStart(4, '0')}`,
    // Few distinct values, so almost every item ties with others on a and on (a, b).
    a: (i * 7) % 10,
    b: (i * 13) % 6,
    userId: user.subject,
    _createdAt: now,
    _updatedAt: now,
  }));
  await nativeCollection(t, entry).insertMany(docs);

  for (const [i, owner] of ['mine', 'other', 'mine'].entries())
    await t
      .http()
      .post('/data/shop')
      .set('X-Api-Key', user.apiKey)
      .send({
        item: {
          _id: `p${i}`,
          userId: owner === 'mine' ? sub.accountId : 'someone-else',
          total: 10 * (i + 1),
          status: i === 1 ? 'open' : 'paid',
          customer: { name: `c${i}`, email: `c${i}@example.com` },
          notes: 'long text',
        },
      })
      .expect(200);
});
afterAll(async () => t.close());

async function walk(first: string, key = user.apiKey): Promise<Item[]> {
  const seen: Item[] = [];
  let url: string | undefined = first;
  while (url) {
    const res = await t.http().get(url).set('X-Api-Key', key);
    expect([200, 204]).toContain(res.status);
    if (res.status === 204) break;
    seen.push(...(res.body as Item[]));
    url = linkOf(res.headers.link);
  }
  return seen;
}

describe('sort on several fields', () => {
  it(`walks ${WALK_ITEMS} items with sort=a,-b and limit 37, visiting each exactly once, in order`, async () => {
    const seen = await walk('/data/walk?sort=a,-b&limit=37');
    expect(seen).toHaveLength(WALK_ITEMS);
    expect(new Set(seen.map((i) => i._id)).size).toBe(WALK_ITEMS);
    // a ascending, then b descending, then _id descending (the direction of the last field).
    for (let i = 1; i < seen.length; i += 1) {
      const [p, q] = [seen[i - 1] as Item, seen[i] as Item];
      const order =
        (p.a as number) - (q.a as number) ||
        (q.b as number) - (p.b as number) ||
        (p._id < q._id ? 1 : -1);
      expect(order).toBeLessThan(0);
    }
  });

  it('walks the same order with a projection that leaves the sort fields out', async () => {
    const seen = await walk('/data/walk?sort=a,-b&limit=150&fields=_id');
    expect(seen).toHaveLength(WALK_ITEMS);
    expect(new Set(seen.map((i) => i._id)).size).toBe(WALK_ITEMS);
    expect(Object.keys(seen[0] ?? {})).toEqual(['_id']);
    const full = await walk('/data/walk?sort=a,-b&limit=500');
    expect(seen.map((i) => i._id)).toEqual(full.map((i) => i._id));
  });

  it('puts every sort field and _id in the next link', async () => {
    const res = await t.http().get('/data/walk?sort=a,-b&limit=5').set('X-Api-Key', user.apiKey);
    const next = decodeURIComponent(linkOf(res.headers.link) ?? '');
    expect(next).toMatch(/after\[a\]=\d/);
    expect(next).toMatch(/after\[b\]=\d/);
    expect(next).toMatch(/after\[_id\]=w\d{4}/);
  });

  it('keeps sortOrder for a single unsigned field and refuses it with signed ones', async () => {
    const asc = await t
      .http()
      .get('/data/shop?sort=total&sortOrder=asc')
      .set('X-Api-Key', user.apiKey)
      .expect(200);
    expect((asc.body as Item[]).map((i) => i.total)).toEqual([10, 20, 30]);
    const desc = await t.http().get('/data/shop?sort=-total').set('X-Api-Key', user.apiKey);
    expect((desc.body as Item[]).map((i) => i.total)).toEqual([30, 20, 10]);
    for (const query of ['sort=a,-b&sortOrder=asc', 'sort=a,a', 'sort=_id,a', 'sort=a,b,c,d,e,f']) {
      const res = await t.http().get(`/data/shop?${query}`).set('X-Api-Key', user.apiKey);
      expect(res.status).toBe(400);
    }
    const missing = await t
      .http()
      .get('/data/walk?sort=a,-b&after[a]=1&after[_id]=w0001')
      .set('X-Api-Key', user.apiKey)
      .expect(400);
    expect(missing.body.errors[0].field).toBe('after[b]');
  });
});

describe('fields', () => {
  it('returns only the listed fields plus _id, nested paths included; unknown ones are absent', async () => {
    const res = await t
      .http()
      .get('/data/shop?sort=_id&sortOrder=asc&fields=total,customer.name,nothing')
      .set('X-Api-Key', user.apiKey)
      .expect(200);
    expect(res.body[0]).toEqual({ _id: 'p0', total: 10, customer: { name: 'c0' } });
  });

  it('leaves out fields listed with -', async () => {
    const res = await t
      .http()
      .get('/data/shop/_id/p1?fields=-notes,-customer.email')
      .set('X-Api-Key', user.apiKey)
      .expect(200);
    expect(res.body).toMatchObject({ _id: 'p1', total: 20, customer: { name: 'c1' } });
    expect(res.body).not.toHaveProperty('notes');
    expect(res.body.customer).not.toHaveProperty('email');
    expect(res.body).toHaveProperty('_createdAt');
  });

  it('gives a projected item its own ETag, usable for If-None-Match but not If-Match', async () => {
    const whole = await t.http().get('/data/shop/_id/p2').set('X-Api-Key', user.apiKey).expect(200);
    const part = await t
      .http()
      .get('/data/shop/_id/p2?fields=total')
      .set('X-Api-Key', user.apiKey)
      .expect(200);
    expect(part.body).toEqual({ _id: 'p2', total: 30 });
    expect(part.headers.etag).toMatch(/^"/);
    expect(part.headers.etag).not.toBe(whole.headers.etag);
    await t
      .http()
      .get('/data/shop/_id/p2?fields=total')
      .set('X-Api-Key', user.apiKey)
      .set('If-None-Match', part.headers.etag as string)
      .expect(304);
    await t
      .http()
      .put('/data/shop/_id/p2')
      .set('X-Api-Key', user.apiKey)
      .set('If-Match', part.headers.etag as string)
      .send({ values: { status: 'void' } })
      .expect(412);
    await t
      .http()
      .put('/data/shop/_id/p2')
      .set('X-Api-Key', user.apiKey)
      .set('If-Match', whole.headers.etag as string)
      .send({ values: { status: 'void' } })
      .expect(200);
  });

  it('keeps a sub key to its own items with a projection', async () => {
    const res = await t
      .http()
      .get('/data/shop?fields=userId&sort=_id&sortOrder=asc')
      .set('X-Api-Key', sub.apiKey)
      .expect(200);
    expect(res.body).toEqual([
      { _id: 'p0', userId: sub.accountId },
      { _id: 'p2', userId: sub.accountId },
    ]);
    await t.http().get('/data/shop/_id/p1?fields=total').set('X-Api-Key', sub.apiKey).expect(404);
  });

  it.each([
    ['fields=a,-b', 'fields'],
    ['fields=a,a.b', 'fields'],
    ['fields=-_id', 'fields'],
    ['fields=a.$b', 'fields'],
    ['fields=x.%20a', 'fields'],
    ['sort=a%C2%A0', 'sort'],
    // Spaces at a segment's ends: the fallback database cannot sort or project by such paths.
  ])('refuses %s', async (query, field) => {
    const res = await t.http().get(`/data/shop?${query}`).set('X-Api-Key', user.apiKey).expect(400);
    expect(res.body.errors[0].field).toBe(field);
  });

  it('is refused on a count, where it would mean nothing', async () => {
    await t.http().get('/data/shop/count?fields=total').set('X-Api-Key', user.apiKey).expect(400);
  });
});
