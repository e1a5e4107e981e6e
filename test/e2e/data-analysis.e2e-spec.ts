import { createTestApp, type TestApp } from '../support/app';
import { mongoOnly } from '../support/database-server';
import {
  createTenants,
  type TestSubProfile,
  type TestTeam,
  type TestUser,
} from '../support/factories';

/**
 * Grouped counts and sums, and query plans with index advice, against the real database; the
 * index-use assertions need MongoDB's explain output.
 */
let t: TestApp;
let user: TestUser;
let sub: TestSubProfile;
let team: TestTeam;

const MAX_GROUPS = 4;

type Order = { _id: string; userId: string; status: string; total: number | string };
const orders: Order[] = [];

beforeAll(async () => {
  t = await createTestApp(__filename, { AGGREGATE_MAX_GROUPS: String(MAX_GROUPS) });
  ({ user, subA: sub, team } = await createTenants(t));
  const statuses = ['open', 'paid', 'void'];
  for (let i = 0; i < 12; i += 1) {
    const order: Order = {
      _id: `o${i}`,
      userId: i % 2 === 0 ? sub.accountId : user.subject,
      status: statuses[i % 3] as string,
      // One string among the numbers: sums and averages read numbers only.
      total: i === 11 ? 'n/a' : i * 10,
    };
    orders.push(order);
    await t
      .http()
      .post('/data/orders')
      .set('X-Api-Key', user.apiKey)
      .send({ item: order })
      .expect(200);
  }
  await t
    .http()
    .post('/data/orders')
    .set('X-Api-Key', user.apiKey)
    .send({ item: { _id: 'nostatus', total: 1000 } })
    .expect(200);
  for (let i = 0; i < 3; i += 1)
    await t
      .http()
      .post('/data/orders')
      .set('X-Api-Key', team.apiKey)
      .send({ item: { status: 'open', total: 5 } })
      .expect(200);
});
afterAll(async () => t.close());

const aggregate = (key: string, query: string) =>
  t.http().get(`/data/orders/aggregate?${query}`).set('X-Api-Key', key);
const explain = (key: string, query: string) =>
  t.http().get(`/data/orders/explain?${query}`).set('X-Api-Key', key);

/** The expected groups, computed in memory over the given orders. */
function groups(
  of: { status?: string; total: number | string }[],
  reduce: (values: (number | string)[]) => unknown,
) {
  const byKey = new Map<string | null, (number | string)[]>();
  for (const o of of)
    byKey.set(o.status ?? null, [...(byKey.get(o.status ?? null) ?? []), o.total]);
  return [...byKey.entries()]
    .sort(([a], [b]) => (a === null ? -1 : b === null ? 1 : a < b ? -1 : 1))
    .map(([key, values]) => ({ key, value: reduce(values) }));
}
const numbers = (values: (number | string)[]) =>
  values.filter((v): v is number => typeof v === 'number');
const all = () => [...orders, { _id: 'nostatus', total: 1000 }];

describe('aggregate', () => {
  it('counts per group, items without the field in the group null, team items apart', async () => {
    const res = await aggregate(user.apiKey, 'groupBy=status').expect(200);
    expect(res.body).toEqual({ groups: groups(all(), (v) => v.length), truncated: false });
    const teams = await aggregate(team.apiKey, 'groupBy=status&op=count').expect(200);
    expect(teams.body).toEqual({ groups: [{ key: 'open', value: 3 }], truncated: false });
  });

  it.each([
    ['sum', (v: number[]) => v.reduce((a, b) => a + b, 0)],
    ['avg', (v: number[]) => v.reduce((a, b) => a + b, 0) / v.length],
    ['min', (v: number[]) => Math.min(...v)],
    ['max', (v: number[]) => Math.max(...v)],
  ])('op=%s over numbers', async (op, reduce) => {
    const res = await aggregate(user.apiKey, `groupBy=status&op=${op}&field=total`).expect(200);
    const want = groups(
      all().filter((o) => typeof o.total === 'number'),
      (v) => reduce(numbers(v)),
    );
    expect(res.body.groups).toEqual(want);
  });

  it('applies filters and operators, and confines a sub key to its own items', async () => {
    const filtered = await aggregate(user.apiKey, 'groupBy=status&total[gte]=50').expect(200);
    expect(filtered.body.groups).toEqual(
      groups(
        all().filter((o) => typeof o.total === 'number' && o.total >= 50),
        (v) => v.length,
      ),
    );
    const mine = orders.filter((o) => o.userId === sub.accountId);
    for (const query of ['groupBy=status', 'groupBy=status&status[ne]=void', 'groupBy=userId']) {
      const res = await aggregate(sub.apiKey, query).expect(200);
      const want =
        query === 'groupBy=userId'
          ? [{ key: sub.accountId, value: mine.length }]
          : groups(
              mine.filter((o) => !query.includes('void') || o.status !== 'void'),
              (v) => v.length,
            );
      expect(res.body.groups).toEqual(want);
    }
    const sums = await aggregate(sub.apiKey, 'groupBy=userId&op=sum&field=total').expect(200);
    expect(sums.body.groups).toEqual([
      { key: sub.accountId, value: numbers(mine.map((o) => o.total)).reduce((a, b) => a + b, 0) },
    ]);
  });

  it(`says when it cut the answer at AGGREGATE_MAX_GROUPS (${MAX_GROUPS})`, async () => {
    const res = await aggregate(user.apiKey, 'groupBy=_id').expect(200);
    expect(res.body.groups).toHaveLength(MAX_GROUPS);
    expect(res.body.truncated).toBe(true);
    const exact = await aggregate(user.apiKey, 'groupBy=status&status[in]=open,paid').expect(200);
    expect(exact.body.truncated).toBe(false);
  });

  it('answers no groups for a collection that does not exist', async () => {
    const res = await t
      .http()
      .get('/data/nothing/aggregate?groupBy=a')
      .set('X-Api-Key', user.apiKey)
      .expect(200);
    expect(res.body).toEqual({ groups: [], truncated: false });
  });

  it.each([
    ['', 'groupBy'],
    ['groupBy=status&op=median', 'op'],
    ['groupBy=status&op=sum', 'field'],
    ['groupBy=status&op=count&field=total', 'field'],
    ['groupBy=$status', 'groupBy'],
    ['groupBy=status&op=sum&field=a.$b', 'field'],
    ['groupBy=status&sort=total', 'sort'],
    ['groupBy=status&limit=5', 'limit'],
    ['groupBy=status&total[regex]=1', 'total[regex]'],
  ])('refuses %p, naming %s', async (query, field) => {
    const res = await aggregate(user.apiKey, query).expect(400);
    expect(res.body.errors.map((e: { field: string }) => e.field)).toContain(field);
  });
});

describe('explain', () => {
  it('says what it knows of the plan and suggests an index in the POST /index format', async () => {
    const res = await explain(user.apiKey, 'status=open&total[gte]=10&sort=-_createdAt').expect(
      200,
    );
    const suggestion = { fields: { status: 1, _createdAt: -1, total: 1 } };
    if (res.body.indexUsed === 'unknown') {
      // A database whose explain output is not MongoDB's: nothing is guessed.
      expect(res.body).toEqual({ indexUsed: 'unknown', stage: 'unknown', suggestion });
    } else {
      expect(res.body).toMatchObject({ indexUsed: null, suggestion });
      expect(typeof res.body.docsExamined).toBe('number');
    }
    // The suggestion is a valid index definition.
    await t
      .http()
      .post('/data/orders/index')
      .set('X-Api-Key', user.apiKey)
      .send(suggestion)
      .expect(200);
  });

  it("puts a sub key's owner field first, as an equality", async () => {
    const res = await explain(sub.apiKey, 'sort=total').expect(200);
    expect(res.body.suggestion).toEqual({ fields: { userId: 1, total: -1 } });
  });

  it('suggests nothing for a plain _id list, and refuses what a list refuses', async () => {
    const res = await explain(user.apiKey, '').expect(200);
    expect(res.body.suggestion).toBeUndefined();
    await explain(user.apiKey, 'sort=a,a').expect(400);
    await explain(user.apiKey, 'total[between]=1').expect(400);
  });

  mongoOnly(
    "explain's index use: winningPlan is MongoDB's output, FerretDB reports its SQL plan",
    () => {
      it('reports index use for range, in and prefix filters and sorted lists', async () => {
        await t
          .http()
          .post('/data/orders/index')
          .set('X-Api-Key', user.apiKey)
          .send({ fields: { total: 1 }, name: 'by_total' })
          .expect(200);
        await t
          .http()
          .post('/data/orders/index')
          .set('X-Api-Key', user.apiKey)
          .send({ fields: { status: 1 }, name: 'by_status' })
          .expect(200);
        for (const query of ['total[gte]=10&total[lt]=50', 'sort=total&sortOrder=asc']) {
          const res = await explain(user.apiKey, query).expect(200);
          expect(res.body.indexUsed).toBe('by_total');
          expect(res.body.suggestion).toBeUndefined();
        }
        for (const query of ['status[in]=open,paid', 'status[prefix]=op']) {
          const res = await explain(user.apiKey, query).expect(200);
          expect(res.body.indexUsed).toBe('by_status');
        }
        const scan = await explain(user.apiKey, 'nothing[gt]=1').expect(200);
        expect(scan.body).toMatchObject({
          indexUsed: null,
          suggestion: { fields: { nothing: 1 } },
        });
      });
    },
  );
});

describe('GET /data/{c}/stats', () => {
  it("counts the namespace's items and indexes without a scan, per tenant", async () => {
    const res = await t.http().get('/data/orders/stats').set('X-Api-Key', user.apiKey).expect(200);
    const indexes = await t.http().get('/data/orders/index').set('X-Api-Key', user.apiKey);
    expect(res.body).toEqual({
      count: orders.length + 1,
      indexes: (indexes.body as unknown[]).length,
      sizeBytes: expect.any(Number),
    });
    expect(res.body.sizeBytes).toBeGreaterThan(0);
    const teams = await t.http().get('/data/orders/stats').set('X-Api-Key', team.apiKey);
    expect(teams.body).toMatchObject({ count: 3, indexes: 1 });
  });

  it('is for root and team keys, and a 404 for a collection that does not exist', async () => {
    const sub403 = await t.http().get('/data/orders/stats').set('X-Api-Key', sub.apiKey);
    expect(sub403.status).toBe(403);
    const missing = await t.http().get('/data/nothing/stats').set('X-Api-Key', user.apiKey);
    expect(missing.status).toBe(404);
    expect(missing.body.code).toBe('COLLECTION_NOT_FOUND');
  });
});
