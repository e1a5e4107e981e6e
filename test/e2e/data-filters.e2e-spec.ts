import fc from 'fast-check';
import { createTestApp, type TestApp } from '../support/app';
import {
  createTenants,
  type TestSubProfile,
  type TestTeam,
  type TestUser,
} from '../support/factories';

/**
 * Filter operators on lists, counts, and the body filter of PUT and DELETE, against the real
 * database: each operator, the owner scope of sub keys with every operator, the isolation of
 * teams, every refusal, and random filters checked against an evaluation in memory.
 */
let t: TestApp;
let user: TestUser;
let subA: TestSubProfile;
let subB: TestSubProfile;
let team: TestTeam;

type Item = Record<string, unknown> & { _id: string };

const STATUSES = ['open', 'paid', 'void', 'a,b', 'a.*'];
const items: Item[] = [];

beforeAll(async () => {
  t = await createTestApp(__filename);
  ({ user, subA, subB, team } = await createTenants(t));
  const owners = [user.subject, subA.accountId, subB.accountId];
  for (let i = 0; i < 30; i += 1) {
    const item: Item = {
      _id: `o${String(i).padStart(2, '0')}`,
      userId: owners[i % 3],
      // Numbers, with a few strings that spell numbers and one missing value.
      ...(i === 29 ? {} : { total: i % 7 === 3 ? String(i * 10) : i * 10 }),
      status: STATUSES[i % STATUSES.length],
      sku: `SKU-${i % 4}.${i}`,
      ...(i % 5 === 0 ? { note: i % 10 === 0 ? null : 'n' } : {}),
    };
    items.push(item);
    await t.http().post('/data/orders').set('X-Api-Key', user.apiKey).send({ item }).expect(200);
  }
  // The team's collection of the same name holds items that match every filter below.
  for (let i = 0; i < 3; i += 1)
    await t
      .http()
      .post('/data/orders')
      .set('X-Api-Key', team.apiKey)
      .send({ item: { _id: `team${i}`, total: 100, status: 'open', sku: 'SKU-0.x' } })
      .expect(200);
});
afterAll(async () => t.close());

const list = (key: string, query: string, order = 'limit=500&sort=_id&sortOrder=asc') =>
  t.http().get(`/data/orders?${order}&${query}`).set('X-Api-Key', key);
const count = (key: string, query: string) =>
  t.http().get(`/data/orders/count?${query}`).set('X-Api-Key', key);
/** The ids of a list answer; a 204 has no body. */
const idsOf = (body: unknown): string[] =>
  (Array.isArray(body) ? (body as Item[]) : []).map((i) => i._id);

/** The operators' documented meaning, evaluated in memory. */
type Predicate = (item: Item) => boolean;
const has = (item: Item, f: string) => Object.hasOwn(item, f);
const sameType = (a: unknown, b: unknown) => typeof a === typeof b && a !== null;
function candidates(raw: string): unknown[] {
  const out: unknown[] = [raw];
  if (/^-?(0|[1-9]\d*)(\.\d+)?([eE][+-]?\d+)?$/.test(raw)) out.push(Number(raw));
  else if (raw === 'true' || raw === 'false') out.push(raw === 'true');
  else if (raw === 'null') out.push(null);
  return out;
}
const equalsAny = (item: Item, f: string, values: unknown[]) =>
  values.some((v) => (v === null ? has(item, f) && item[f] === null : item[f] === v));
const rangeOperand = (raw: string): string | number =>
  /^-?(0|[1-9]\d*)(\.\d+)?([eE][+-]?\d+)?$/.test(raw) ? Number(raw) : raw;
function compare(op: string, a: unknown, b: string | number): boolean {
  if (!sameType(a, b)) return false;
  const x = a as string | number;
  return op === 'gt' ? x > b : op === 'gte' ? x >= b : op === 'lt' ? x < b : x <= b;
}
function predicate(field: string, op: string, raw: string): Predicate {
  switch (op) {
    case 'eq':
      return (item) => equalsAny(item, field, candidates(raw));
    case 'ne':
      // A missing field counts as null, so `ne null` also leaves out items without the field.
      return (item) =>
        !equalsAny(
          { ...item, [field]: has(item, field) ? item[field] : null },
          field,
          candidates(raw),
        );
    case 'in':
      return (item) => equalsAny(item, field, raw.split(',').flatMap(candidates));
    case 'nin':
      return (item) =>
        !equalsAny(
          { ...item, [field]: has(item, field) ? item[field] : null },
          field,
          raw.split(',').flatMap(candidates),
        );
    case 'exists':
      return (item) => has(item, field) === (raw === 'true');
    case 'prefix':
      return (item) => typeof item[field] === 'string' && item[field].startsWith(raw);
    default:
      return (item) => compare(op, item[field], rangeOperand(raw));
  }
}
const expectedIn = (pool: Item[], owner: string | null, ...predicates: Predicate[]) =>
  pool
    .filter((i) => owner === null || i.userId === owner)
    .filter((i) => predicates.every((p) => p(i)))
    .map((i) => i._id);
const expected = (owner: string | null, ...predicates: Predicate[]) =>
  expectedIn(items, owner, ...predicates);

/** One case per operator: the query-string condition and its in-memory meaning. */
const CASES: [string, string, string][] = [
  ['total', 'eq', '40'],
  ['total', 'ne', '40'],
  ['total', 'gt', '150'],
  ['total', 'gte', '150'],
  ['total', 'lt', '50'],
  ['total', 'lte', '50'],
  ['status', 'in', 'open,void'],
  ['status', 'nin', 'open,void'],
  ['note', 'exists', 'true'],
  ['note', 'exists', 'false'],
  ['sku', 'prefix', 'SKU-1.'],
  ['status', 'prefix', 'a.*'],
  ['status', 'gt', 'p'],
  ['note', 'eq', 'null'],
  ['note', 'ne', 'null'],
];

describe.each(CASES)('filter[%s][%s]=%s', (field, op, raw) => {
  const query = `filter[${field}][${op}]=${encodeURIComponent(raw)}`;

  it('lists and counts exactly the matching items for root, and never the team items', async () => {
    const want = expected(null, predicate(field, op, raw));
    expect(want.length).toBeGreaterThan(0);
    const res = await list(user.apiKey, query);
    expect(idsOf(res.body)).toEqual(want);
    expect((await count(user.apiKey, query).expect(200)).body).toEqual({ count: want.length });
    // The short form means the same.
    const short = await list(user.apiKey, `${field}[${op}]=${encodeURIComponent(raw)}`);
    expect(idsOf(short.body)).toEqual(want);
  });

  it('confines a sub key to its own items: lists, counts and aggregates', async () => {
    const want = expected(subA.accountId, predicate(field, op, raw));
    const res = await list(subA.apiKey, query);
    expect(idsOf(res.body)).toEqual(want);
    expect((await count(subA.apiKey, query).expect(200)).body).toEqual({ count: want.length });
    const groups = await t
      .http()
      .get(`/data/orders/aggregate?groupBy=userId&${query}`)
      .set('X-Api-Key', subA.apiKey)
      .expect(200);
    expect(groups.body.groups).toEqual(
      want.length === 0 ? [] : [{ key: subA.accountId, value: want.length }],
    );
  });
});

/** A query-string case as a body filter: the same condition with JSON-typed operands. */
function bodyOperand(op: string, raw: string): unknown {
  const typed = (v: string): unknown => (v === 'null' ? null : /^\d+$/.test(v) ? Number(v) : v);
  if (op === 'in' || op === 'nin') return raw.split(',').map(typed);
  if (op === 'exists') return raw === 'true';
  return op === 'prefix' ? raw : typed(raw);
}

describe.each(CASES)('a body filter {%s: {%s: %s}} from a sub key', (field, op, raw) => {
  it('updates with multi exactly its own matching items', async () => {
    const filter = { [field]: { [op]: bodyOperand(op, raw) } };
    const res = await t
      .http()
      .put('/data/orders')
      .set('X-Api-Key', subA.apiKey)
      .send({ filter, values: { seenBy: subA.accountId }, multi: true })
      .expect(200);
    const want = expected(subA.accountId, predicate(field, op, raw));
    expect(res.body.matched).toBe(want.length);
    const seen = await list(user.apiKey, `seenBy=${encodeURIComponent(subA.accountId)}`);
    // Every item it ever marked is its own (earlier cases marked others of its own).
    for (const id of idsOf(seen.body))
      expect(items.find((i) => i._id === id)?.userId).toBe(subA.accountId);
  });

  it("never updates or deletes another owner's item", async () => {
    const filter = { [field]: { [op]: bodyOperand(op, raw) } };
    const foreign = items.filter((i) => i.userId === subB.accountId);
    // The other owner's items this condition selects, or any of them when it selects none.
    const target = foreign.find(predicate(field, op, raw)) ?? foreign[0];
    const id = target?._id ?? '';
    await t
      .http()
      .put(`/data/orders/_id/${id}`)
      .set('X-Api-Key', subA.apiKey)
      .send({ values: { hijacked: true }, filter })
      .expect(404);
    await t
      .http()
      .delete(`/data/orders/_id/${id}`)
      .set('X-Api-Key', subA.apiKey)
      .send({ filter })
      .expect(404);
    const still = await t.http().get(`/data/orders/_id/${id}`).set('X-Api-Key', user.apiKey);
    expect(still.status).toBe(200);
    expect(still.body).not.toHaveProperty('hijacked');
  });
});

describe('operators in detail', () => {
  it('takes a value holding a comma as a repeated in parameter, and keeps it in the Link', async () => {
    const res = await list(
      user.apiKey,
      'status[in]=a%2Cb&status[in]=open',
      'limit=3&sort=_id&sortOrder=asc',
    ).expect(200);
    const want = expected(null, (i) => i.status === 'a,b' || i.status === 'open');
    expect(idsOf(res.body)).toEqual(want.slice(0, 3));
    const next = /<([^>]+)>; rel="next"/.exec(res.headers.link ?? '')?.[1] ?? '';
    expect(next.match(/status%5Bin%5D=/g)).toHaveLength(2);
    const rest = await t.http().get(next).set('X-Api-Key', user.apiKey).expect(200);
    expect(idsOf(rest.body)).toEqual(want.slice(3, 6));
  });

  it('compares _createdAt as dates', async () => {
    const all = (await list(user.apiKey, '', 'limit=500&sort=_createdAt&sortOrder=asc').expect(200))
      .body as (Item & { _createdAt: string })[];
    const pivot = all[10]?._createdAt ?? '';
    const res = await list(user.apiKey, `_createdAt[gt]=${encodeURIComponent(pivot)}`);
    expect(idsOf(res.body).sort()).toEqual(
      all
        .filter((i) => i._createdAt > pivot)
        .map((i) => i._id)
        .sort(),
    );
    const exact = await list(user.apiKey, `_createdAt=${encodeURIComponent(pivot)}`).expect(200);
    expect(idsOf(exact.body)).toContain(all[10]?._id);
  });

  it('combines several operators on one field and across fields', async () => {
    const res = await list(user.apiKey, 'total[gte]=100&total[lt]=200&status[ne]=paid');
    expect(idsOf(res.body)).toEqual(
      expected(
        null,
        predicate('total', 'gte', '100'),
        predicate('total', 'lt', '200'),
        predicate('status', 'ne', 'paid'),
      ),
    );
  });

  it('applies body filter operators to PUT and DELETE, within the owner scope', async () => {
    const target = items.find((i) => i.userId === subA.accountId && typeof i.total === 'number');
    const id = target?._id ?? '';
    const total = target?.total as number;
    await t
      .http()
      .put(`/data/orders/_id/${id}`)
      .set('X-Api-Key', subA.apiKey)
      .send({ values: { checked: true }, filter: { total: { gt: total } } })
      .expect(404);
    const updated = await t
      .http()
      .put(`/data/orders/_id/${id}`)
      .set('X-Api-Key', subA.apiKey)
      .send({ values: { checked: true }, filter: { total: { gte: total, lt: total + 1 } } })
      .expect(200);
    expect(updated.body).toMatchObject({ _id: id, checked: true });
    // Another owner's item stays out of reach whatever the operators.
    const foreign = items.find((i) => i.userId === subB.accountId)?._id ?? '';
    await t
      .http()
      .delete(`/data/orders/_id/${foreign}`)
      .set('X-Api-Key', subA.apiKey)
      .send({ filter: { total: { exists: true } } })
      .expect(404);
    await t.http().get(`/data/orders/_id/${foreign}`).set('X-Api-Key', user.apiKey).expect(200);
  });
});

describe('refusals', () => {
  it.each([
    ['filter[total][regex]=x', 'filter[total][regex]'],
    ['total[$gt]=1', 'total[$gt]'],
    ['filter[total][in]=', 'filter[total][in]'],
    ['total[exists]=yes', 'total[exists]'],
    ['sku[prefix]=', 'sku[prefix]'],
    ['_createdAt[gt]=yesterday', '_createdAt[gt]'],
    ['total[gt]=1&total[gt]=2', 'total[gt]'],
    ['filter[a.$where][eq]=1', 'filter[a.$where][eq]'],
  ])('%s → 400 naming %s', async (query, field) => {
    const res = await list(user.apiKey, query).expect(400);
    expect(res.headers['content-type']).toMatch(/application\/problem\+json/);
    expect(res.body.errors.map((e: { field: string }) => e.field)).toContain(field);
  });

  it('refuses more than FILTER_MAX_CONDITIONS conditions and an in list over its limit', async () => {
    const many = Array.from({ length: 21 }, (_, i) => `f${i}[gt]=1`).join('&');
    const res = await count(user.apiKey, many).expect(400);
    expect(res.body.errors[0]).toMatchObject({ field: 'filter' });
    const values = Array.from({ length: 101 }, (_, i) => i).join(',');
    await list(user.apiKey, `total[in]=${values}`).expect(400);
  });

  it('refuses unknown, $-prefixed and misplaced body operators', async () => {
    for (const filter of [
      { total: { $gt: 1 } },
      { total: { between: [1, 2] } },
      { total: { gt: null } },
      { total: { in: [] } },
      { total: {} },
      { $where: 'sleep(1000)' },
    ]) {
      const res = await t
        .http()
        .delete('/data/orders/_id/o00')
        .set('X-Api-Key', user.apiKey)
        .send({ filter })
        .expect(400);
      expect(res.body.code).toBe('VALIDATION_FAILED');
    }
    await t.http().get('/data/orders/_id/o00').set('X-Api-Key', user.apiKey).expect(200);
  });
});

describe('random filters', () => {
  // Random items too: 40 of them, seeded, with numbers, numeric strings, strings, booleans,
  // nulls and missing fields under the filtered names, owned by the root or by either sub.
  const scalar = fc.oneof(
    fc.integer({ min: -10, max: 300 }),
    fc.integer({ min: -10, max: 300 }).map(String),
    fc.constantFrom('open', 'paid', 'a,b', 'SKU-2', 'SKU-20', 'true', 'null', ''),
    fc.boolean(),
    fc.constant(null),
  );
  const randomItems: Item[] = [];
  beforeAll(async () => {
    const owners = [user.subject, subA.accountId, subB.accountId];
    const sampled = fc.sample(
      fc.record(
        { total: scalar, status: scalar, sku: scalar, note: scalar, owner: fc.nat(2) },
        { requiredKeys: ['owner'] },
      ),
      { numRuns: 40, seed: 2424 },
    );
    sampled.forEach(({ owner, ...fields }, i) =>
      randomItems.push({ _id: `r${String(i).padStart(2, '0')}`, userId: owners[owner], ...fields }),
    );
    const res = await t
      .http()
      .post('/data/random/bulk')
      .set('X-Api-Key', user.apiKey)
      .send({ items: randomItems })
      .expect(200);
    expect(res.body.created).toBe(randomItems.length);
  });

  const field = fc.constantFrom('total', 'status', 'sku', 'note', 'missing');
  const value = fc.oneof(
    fc.constantFrom('0', '40', '150', '290', 'open', 'paid', 'a,b', 'SKU-2', 'null', 'true', '-1'),
    fc.integer({ min: -10, max: 300 }).map(String),
  );
  const condition = fc.tuple(
    field,
    fc.constantFrom('eq', 'ne', 'gt', 'gte', 'lt', 'lte', 'in', 'nin', 'exists', 'prefix'),
    value,
  );

  it('match the documented meaning over random items, for root and sub keys', async () => {
    await fc.assert(
      fc.asyncProperty(
        // One parameter per field and operator: a repeated one is refused (tested above).
        fc.uniqueArray(condition, {
          minLength: 1,
          maxLength: 3,
          selector: ([f, op]) => `${f}/${op}`,
        }),
        fc.boolean(),
        async (conditions, asSub) => {
          const usable = conditions.map(([f, op, v]): [string, string, string] => [
            f,
            op,
            op === 'exists' ? (v.length % 2 === 0 ? 'true' : 'false') : v,
          ]);
          const query = usable
            .map(([f, op, v]) => `filter[${f}][${op}]=${encodeURIComponent(v)}`)
            .join('&');
          const key = asSub ? subA.apiKey : user.apiKey;
          const res = await t
            .http()
            .get(`/data/random?limit=500&sort=_id&sortOrder=asc&${query}`)
            .set('X-Api-Key', key);
          expect([200, 204]).toContain(res.status);
          const want = expectedIn(
            randomItems,
            asSub ? subA.accountId : null,
            ...usable.map(([f, op, v]) => predicate(f, op, v)),
          );
          expect(idsOf(res.body)).toEqual(want);
        },
      ),
      { numRuns: 60, seed: 1313 },
    );
  });

  it('answer hostile body filters with 400 or a result, never a server error', async () => {
    const operand = fc.oneof(
      fc.jsonValue({ maxDepth: 2 }),
      fc.constantFrom('$where', { $gt: 1 }, [null], '\u0000', 'a'.repeat(2000)),
    );
    const condition = fc.oneof(
      operand,
      fc.dictionary(
        fc.oneof(
          fc.constantFrom(...'eq ne gt gte lt lte in nin exists prefix $gt $regex'.split(' ')),
          fc.string({ maxLength: 6 }),
        ),
        operand,
        { maxKeys: 3 },
      ),
    );
    await fc.assert(
      fc.asyncProperty(
        fc.dictionary(
          fc.oneof(
            fc.constantFrom('total', 'status', '_createdAt', '$or'),
            fc.string({ maxLength: 8 }),
          ),
          condition,
          { maxKeys: 3 },
        ),
        fc.boolean(),
        async (filter, multi) => {
          const res = await t
            .http()
            .delete('/data/orders')
            .set('X-Api-Key', subB.apiKey)
            // An impossible extra condition: whatever the filter, nothing is deleted.
            .send({ filter: { ...filter, _id: { in: ['none'] } }, multi });
          expect([200, 204, 400, 404, 409]).toContain(res.status);
        },
      ),
      { numRuns: 150, seed: 3939 },
    );
  });

  it('answer hostile query strings with 400 or a result, never a server error', async () => {
    const hostileKey = fc.oneof(
      fc.string({ maxLength: 12 }),
      fc.constantFrom(
        'filter[a][$where]',
        'a[$regex]',
        'a[$expr]',
        'filter[$or][0]',
        '__proto__[x]',
      ),
      fc
        .tuple(fc.string({ maxLength: 6 }), fc.string({ maxLength: 6 }))
        .map(([a, b]) => `${a}[${b}]`),
      fc
        .tuple(fc.string({ maxLength: 6 }), fc.string({ maxLength: 6 }))
        .map(([a, b]) => `filter[${a}][${b}]`),
    );
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.tuple(hostileKey, fc.string({ maxLength: 12 })), {
          minLength: 1,
          maxLength: 4,
        }),
        async (pairs) => {
          const query = pairs
            .map(([k, v]) => `${encodeURIComponent(k)}=${encodeURIComponent(v)}`)
            .join('&');
          const res = await list(user.apiKey, query);
          expect([200, 204, 400]).toContain(res.status);
        },
      ),
      { numRuns: 150, seed: 2626 },
    );
  });
});
