import fc from 'fast-check';
import type { CommandStartedEvent } from 'mongodb';
import { createTestApp, type TestApp } from '../support/app';
import { createSubKey, createUser, type TestSubProfile, type TestUser } from '../support/factories';
import { expectInvalid, expectProblem } from '../support/problems';

/**
 * `expand` on reads (docs/data.md, "Expanding references"): references replaced by the items they
 * name, one `$in` query per expansion per page, each through the target collection's own read
 * rules for the caller; the model test at the end compares every expanded value with a model of
 * what the test wrote.
 */
let t: TestApp;
let user: TestUser;
let sub: TestSubProfile;
let otherSub: TestSubProfile;

/** Every command the app sends to the database, while `recording`. */
const commands: CommandStartedEvent[] = [];
let recording = false;

const ORIGIN = 'https://shop.example.com';

beforeAll(async () => {
  t = await createTestApp(__filename, {
    // Rules written to the registry are read by the next request.
    REGISTRY_CACHE_MS: '0',
    METRICS_DATABASE_COMMANDS: 'true',
  });
  t.connection.getClient().on('commandStarted', (event: CommandStartedEvent) => {
    if (recording) commands.push(event);
  });
  user = await createUser(t);
  sub = await createSubKey(t, user);
  otherSub = await createSubKey(t, user);
});
afterAll(async () => t.close());

type Json = Record<string, unknown>;

const get = (key: string, path: string, headers: Record<string, string> = {}) => {
  const request = t.http().get(path).set('X-Api-Key', key);
  for (const [name, value] of Object.entries(headers)) request.set(name, value);
  return request;
};

async function create(collection: string, item: Json, headers: Record<string, string> = {}) {
  const request = t.http().post(`/data/${collection}`).set('X-Api-Key', user.apiKey);
  for (const [name, value] of Object.entries(headers)) request.set(name, value);
  const res = await request.send({ item });
  expect(res.status).toBe(200);
  return res.body as Json & { _id: string };
}

async function setAccessRules(collection: string, rules: unknown): Promise<void> {
  await t
    .http()
    .put(`/data/${collection}/access`)
    .set('X-Api-Key', user.apiKey)
    .send(rules as object)
    .expect(200);
}

/** The physical collection of the user's collection `name` (its registry entry). */
async function physicalOf(name: string): Promise<string | undefined> {
  const entry = await t.connection
    .collection('data_collections')
    .findOne({ tenant: user.subject, name });
  return entry?.physical as string | undefined;
}

/**
 * The finds `work` sends for the user's collections `names`: to their items collections and to
 * their registry entries. Finds of anything else — a sweep of another collection that runs
 * meanwhile (the expiry test's `tickets`) — are not the request's.
 */
async function recorded(
  names: readonly string[],
  work: () => Promise<unknown>,
): Promise<{ items: number; registry: number }> {
  const physical = new Set(
    (await Promise.all(names.map(physicalOf))).filter((p): p is string => p !== undefined),
  );
  commands.length = 0;
  recording = true;
  try {
    await work();
  } finally {
    recording = false;
  }
  const finds = commands.filter((event) => event.command.find !== undefined);
  return {
    items: finds.filter((event) => physical.has(event.command.find as string)).length,
    registry: finds.filter(
      (event) =>
        event.command.find === 'data_collections' &&
        names.includes((event.command.filter as { name?: unknown } | undefined)?.name as string),
    ).length,
  };
}

const byId = (items: Json[]) => new Map(items.map((item) => [item._id as string, item]));

describe('expanding references', () => {
  let ann: Json & { _id: string };
  let bob: Json & { _id: string };
  let pen: Json & { _id: string };
  beforeAll(async () => {
    ann = await create('customers', { _id: 'ann', name: 'Ann', email: 'ann@example.com' });
    bob = await create('customers', { _id: 'bob', name: 'Bob', email: 'bob@example.com' });
    pen = await create('products', { _id: 'pen', title: 'Pen', price: 2 });
    for (const item of [
      { _id: 'o1', n: 1, customer: 'ann', lines: [{ product: 'pen', qty: 1 }, { qty: 2 }] },
      { _id: 'o2', n: 2, customer: ['bob', 'nobody', 'ann'], lines: [{ product: 'gone' }] },
      { _id: 'o3', n: 3, customer: null, lines: 'none' },
      { _id: 'o4', n: 4, customer: 7, lines: [{ product: ['pen', 'pen'] }, 'x'] },
      { _id: 'o5', n: 5, customer: ['ann', 3], lines: [] },
      { _id: 'o6', n: 6 },
      { _id: 'o7', n: 7, customer: { id: 'ann' }, lines: [{ product: { id: 'pen' } }] },
    ])
      await create('orders', item);
  });

  it('replaces string ids, arrays of ids and ids inside an array by the items, null when absent, and leaves anything else as it is', async () => {
    const res = await get(
      user.apiKey,
      '/data/orders?sort=n&sortOrder=asc&expand=customer:customers,lines.product:products',
    ).expect(200);
    const items = byId(res.body as Json[]);
    expect(items.get('o1')).toMatchObject({
      customer: ann,
      lines: [{ product: pen, qty: 1 }, { qty: 2 }],
    });
    expect(items.get('o2')).toMatchObject({
      customer: [bob, null, ann],
      lines: [{ product: null }],
    });
    expect(items.get('o3')).toMatchObject({ customer: null, lines: 'none' });
    expect(items.get('o4')).toMatchObject({ customer: 7, lines: [{ product: [pen, pen] }, 'x'] });
    expect(items.get('o5')).toMatchObject({ customer: ['ann', 3], lines: [] });
    expect(items.get('o6')).not.toHaveProperty('customer');
    expect(items.get('o7')).toMatchObject({
      customer: { id: 'ann' },
      lines: [{ product: { id: 'pen' } }],
    });
    // The expanded item is the item as its own GET answers it: no hidden field.
    expect(Object.keys(ann).sort()).toEqual(
      Object.keys((items.get('o1') as { customer: Json }).customer).sort(),
    );
  });

  it('expands on GET one with an ETag that covers the expanded items: no 304 once one changed', async () => {
    const plain = await get(user.apiKey, '/data/orders/_id/o1').expect(200);
    const path = '/data/orders/_id/o1?expand=customer:customers';
    const expanded = await get(user.apiKey, path, {
      'If-None-Match': String(plain.headers.etag),
    }).expect(200);
    expect(expanded.body).toMatchObject({ _id: 'o1', customer: ann });
    const etag = expanded.headers.etag as string;
    expect(etag).not.toBe(plain.headers.etag);
    await get(user.apiKey, path, { 'If-None-Match': etag }).expect(304);
    // The order is unchanged, its customer changes: the expanded answer is new.
    await t
      .http()
      .put('/data/customers/_id/ann')
      .set('X-Api-Key', user.apiKey)
      .send({ values: { name: 'Ann B' } })
      .expect(200);
    const again = await get(user.apiKey, path, { 'If-None-Match': etag }).expect(200);
    expect(again.body.customer).toMatchObject({ _id: 'ann', name: 'Ann B' });
    expect(again.headers.etag).not.toBe(etag);
    ann = again.body.customer as Json & { _id: string };
  });

  it('refuses more than 4 expansions and a pair that is not path:collection', async () => {
    const five = ['a', 'b', 'c', 'd', 'e'].map((p) => `${p}:customers`).join(',');
    expectInvalid(await get(user.apiKey, `/data/orders?expand=${five}`), 'expand');
    expectInvalid(await get(user.apiKey, `/data/orders/_id/o1?expand=${five}`), 'expand');
    for (const bad of [
      'customer',
      'customer:',
      ':customers',
      'customer:a:b',
      '_id:customers',
      '_createdAt:customers',
      'customer:9bad',
      'customer:customers,customer.x:products',
      '_revision:customers',
    ])
      expectInvalid(
        await get(user.apiKey, `/data/orders?expand=${encodeURIComponent(bad)}`),
        'expand',
      );
    expectInvalid(
      await get(user.apiKey, '/data/orders?expand=customer:customers&expand=lines:products'),
      'expand',
    );
  });

  it('projects expanded items with fields below their path and keeps the reference', async () => {
    const res = await get(
      user.apiKey,
      '/data/orders?sort=n&sortOrder=asc&limit=2&fields=customer.name,n,lines.product.title&expand=customer:customers,lines.product:products',
    ).expect(200);
    expect(res.body).toEqual([
      {
        _id: 'o1',
        n: 1,
        customer: { _id: 'ann', name: 'Ann B' },
        lines: [{ product: { _id: 'pen', title: 'Pen' } }, {}],
      },
      {
        _id: 'o2',
        n: 2,
        customer: [{ _id: 'bob', name: 'Bob' }, null, { _id: 'ann', name: 'Ann B' }],
        lines: [{ product: null }],
      },
    ]);
    // The next page's link keeps expand (and fields).
    const link = res.headers.link as string;
    expect(link).toContain('expand=customer%3Acustomers%2Clines.product%3Aproducts');
    const next = /<([^>]+)>/.exec(link)?.[1] as string;
    const page2 = await get(user.apiKey, next).expect(200);
    expect(page2.body[0]).toEqual({ _id: 'o3', n: 3, customer: null });

    // The reference itself in fields: the expanded item is whole.
    const whole = await get(
      user.apiKey,
      '/data/orders/_id/o1?fields=customer&expand=customer:customers',
    ).expect(200);
    expect(whole.body).toEqual({ _id: 'o1', customer: ann });
    // Excluding below the path: the expanded item without it, the order whole.
    const excluded = await get(
      user.apiKey,
      '/data/orders/_id/o1?fields=-customer.email,-lines&expand=customer:customers',
    ).expect(200);
    const { email: _, ...annWithoutEmail } = ann;
    expect(excluded.body.customer).toEqual(annWithoutEmail);
    expect(excluded.body).not.toHaveProperty('lines');
    expect(excluded.body.n).toBe(1);
    expectProblem(
      await get(user.apiKey, '/data/orders?fields=-customer._id&expand=customer:customers'),
      400,
      'VALIDATION_FAILED',
    );
  });

  it('sends one query per expansion whose page holds ids, and none for the others', async () => {
    const path = '/data/orders?sort=n&sortOrder=asc&limit=3';
    const involved = ['orders', 'customers', 'products', 'missing'];
    const plain = await recorded(involved, () => get(user.apiKey, path).expect(200));
    // customer and lines.product hold ids on this page; `n` holds none; `missing` is no collection.
    const expanded = await recorded(involved, () =>
      get(
        user.apiKey,
        `${path}&expand=customer:customers,lines.product:products,n:products,customer2:missing`,
      ).expect(200),
    );
    expect(plain.items).toBe(1);
    expect(expanded.items - plain.items).toBe(2);
    // Besides: each target's registry entry (read every time here: REGISTRY_CACHE_MS=0).
    expect(expanded.registry - plain.registry).toBe(4);
    const empty = await recorded(involved, () =>
      get(user.apiKey, '/data/orders?n=99&expand=customer:customers').expect(204),
    );
    expect(empty.items).toBe(1);
  });

  it('leaves the references of an item holding more than 100 ids at a path as they are', async () => {
    const many = Array.from({ length: 101 }, () => 'pen');
    await create('carts', { _id: 'big', products: many });
    await create('carts', { _id: 'small', products: many.slice(1) });
    const res = await get(user.apiKey, '/data/carts?expand=products:products').expect(200);
    const items = byId(res.body as Json[]);
    expect(items.get('big')?.products).toEqual(many);
    expect(items.get('small')?.products).toEqual(many.slice(1).map(() => pen));
  });

  it('expands an expired item to null, as the target collection’s own read leaves it out', async () => {
    const live = await create('tickets', { _id: 't-live', validUntil: '2100-01-01T00:00:00Z' });
    await create('tickets', { _id: 't-old', validUntil: '2000-01-01T00:00:00Z' });
    await create('visits', { _id: 'v1', tickets: ['t-live', 't-old'] });
    await t
      .http()
      .put('/data/tickets/expiry')
      .set('X-Api-Key', user.apiKey)
      .send({ field: 'validUntil', afterSeconds: 1 })
      .expect(200);
    await get(user.apiKey, '/data/tickets/_id/t-old').expect(404);
    const res = await get(user.apiKey, '/data/visits/_id/v1?expand=tickets:tickets').expect(200);
    expect(res.body.tickets).toEqual([live, null]);
  });

  it('refuses a fields path below an expansion that names a field the target hides from the key', async () => {
    await create('secrets', { _id: 's1', userId: sub.accountId, code: 'x', label: 'one' });
    await create('holders', { _id: 'h1', userId: sub.accountId, secret: 's1' });
    await setAccessRules('secrets', { protectedFields: { sub: ['code'] } });
    const ok = await get(sub.apiKey, '/data/holders/_id/h1?expand=secret:secrets').expect(200);
    expect(ok.body.secret).toEqual(expect.objectContaining({ _id: 's1', label: 'one' }));
    expect(ok.body.secret).not.toHaveProperty('code');
    expectProblem(
      await get(sub.apiKey, '/data/holders?fields=secret.code&expand=secret:secrets'),
      400,
      'PROTECTED_FIELD',
    );
    // The root key sees it.
    const root = await get(user.apiKey, '/data/holders?fields=secret.code&expand=secret:secrets');
    expect(root.body).toEqual([{ _id: 'h1', secret: { _id: 's1', code: 'x' } }]);
  });
});

/**
 * The model: random references from a main collection into `people` (a filter read rule and a
 * protected field for sub and publishable keys) and `places` (the default rules: a sub key reads
 * its own; the publishable key may not read the collection at all), with ids of items in another
 * branch and of none. Every caller's expanded list equals the model computed from what the test
 * wrote, and its page costs one item query plus one per expansion the caller can query.
 */
describe('the expansion model', () => {
  type Caller = {
    name: 'root' | 'sub' | 'publishable';
    key: string;
    headers: Record<string, string>;
  };
  const people = new Map<string, Json>();
  const places = new Map<string, Json>();
  let callers: Caller[] = [];
  /** The main collection; each run's items carry its number. */
  const MAIN = 'model-orders';
  const POOL = ['pp0', 'pp1', 'pp2', 'pp3', 'pl0', 'pl1', 'pl2', 'dv0', 'pp-dev', 'none'];

  beforeAll(async () => {
    const owners = [sub.accountId, otherSub.accountId, user.subject];
    for (let i = 0; i < 4; i += 1)
      people.set(
        `pp${i}`,
        await create('people', {
          _id: `pp${i}`,
          name: `person ${i}`,
          secret: `s${i}`,
          shared: i % 2 === 0,
          userId: owners[i % 3],
        }),
      );
    for (let i = 0; i < 3; i += 1)
      places.set(
        `pl${i}`,
        await create('places', { _id: `pl${i}`, city: `c${i}`, userId: owners[i % 2] }),
      );
    // Items of another branch: an id only there, and an id the main branch does not hold.
    const dev = { 'X-Branch': 'dev' };
    await create('people', { _id: 'dv0', name: 'dev', shared: true }, dev);
    await create('people', { _id: 'pp-dev', name: 'dev too', shared: true }, dev);
    await setAccessRules('people', {
      sub: { read: { filter: { shared: true } } },
      public: { read: { filter: { shared: true } } },
      protectedFields: { sub: ['secret'], public: ['secret'] },
    });
    const minted = await t
      .http()
      .post('/api-keys')
      .set('X-Api-Key', user.apiKey)
      .send({ kind: 'publishable', collections: [MAIN, 'people'], allowedOrigins: [ORIGIN] })
      .expect(200);
    await create(MAIN, { run: 0, lines: [] });
    await setAccessRules(MAIN, { sub: { read: 'all' }, public: { read: 'all' } });
    callers = [
      { name: 'root', key: user.apiKey, headers: {} },
      { name: 'sub', key: sub.apiKey, headers: {} },
      { name: 'publishable', key: minted.body.apiKey as string, headers: { Origin: ORIGIN } },
    ];
  });

  /** What `caller` reads of `id` in `collection`: the item as written, its hidden fields out, or null. */
  function expected(caller: Caller['name'], collection: string, id: string): Json | null {
    if (collection === 'people') {
      const item = people.get(id);
      if (!item) return null;
      if (caller === 'root') return item;
      if (item.shared !== true) return null;
      const { secret: _, ...visible } = item;
      return visible;
    }
    const item = places.get(id);
    if (!item || caller === 'publishable') return null;
    return caller === 'root' || item.userId === sub.accountId ? item : null;
  }

  /** Whether `caller`'s expansion into `collection` is a query (it may read some item there). */
  const queried = (caller: Caller['name'], collection: string) =>
    !(caller === 'publishable' && collection === 'places');

  const referenceArb = fc.oneof(
    fc.constantFrom(...POOL),
    fc.array(fc.constantFrom(...POOL), { maxLength: 3 }),
    fc.constantFrom<unknown>(null, 5, { id: 'pp0' }, ['pp0', 1]),
  );
  const itemArb = fc.record(
    {
      ref: referenceArb,
      lines: fc.array(fc.record({ p: referenceArb, q: fc.nat(9) }, { requiredKeys: ['q'] }), {
        maxLength: 3,
      }),
    },
    { requiredKeys: ['lines'] },
  );
  const targetArb = fc.constantFrom('people', 'places');

  let runs = 0;
  it('expands for root, sub and publishable callers exactly as the model, one query per expansion', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(itemArb, { minLength: 1, maxLength: 4 }),
        targetArb,
        targetArb,
        async (written, refTarget, lineTarget) => {
          runs += 1;
          const stored: Json[] = [];
          for (const item of written) stored.push(await create(MAIN, { ...item, run: runs }));
          for (const caller of callers) {
            const convert = (target: string, value: unknown): unknown => {
              if (typeof value === 'string') return expected(caller.name, target, value);
              if (Array.isArray(value) && value.every((v) => typeof v === 'string'))
                return value.map((id) => expected(caller.name, target, id));
              return value;
            };
            const model = stored.map((item): Json => {
              const lines = (item.lines as Json[]).map((line) =>
                Object.hasOwn(line, 'p') ? { ...line, p: convert(lineTarget, line.p) } : line,
              );
              return Object.hasOwn(item, 'ref')
                ? { ...item, ref: convert(refTarget, item.ref), lines }
                : { ...item, lines };
            });
            const holdsIds = (values: unknown[]) =>
              values.some(
                (v) =>
                  typeof v === 'string' ||
                  (Array.isArray(v) && v.length > 0 && v.every((e) => typeof e === 'string')),
              );
            const refIds = holdsIds(stored.map((item) => item.ref));
            const lineIds = holdsIds(
              stored.flatMap((item) => (item.lines as Json[]).map((l) => l.p)),
            );
            let body: unknown;
            const reads = await recorded([MAIN, refTarget, lineTarget], async () => {
              const res = await get(
                caller.key,
                `/data/${MAIN}?run=${runs}&limit=100&sort=_id&sortOrder=asc&expand=ref:${refTarget},lines.p:${lineTarget}`,
                caller.headers,
              ).expect(200);
              body = res.body;
            });
            expect({ caller: caller.name, body }).toEqual({
              caller: caller.name,
              body: model.sort((a, b) => (String(a._id) < String(b._id) ? -1 : 1)),
            });
            const expansions =
              Number(refIds && queried(caller.name, refTarget)) +
              Number(lineIds && queried(caller.name, lineTarget));
            expect({ caller: caller.name, reads: reads.items }).toEqual({
              caller: caller.name,
              reads: 1 + expansions,
            });
          }
        },
      ),
      { numRuns: 30 },
    );
  }, 120_000);
});
