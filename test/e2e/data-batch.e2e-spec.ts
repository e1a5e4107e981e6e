import { createTestApp, type TestApp } from '../support/app';
import {
  createTenants,
  type TestSubProfile,
  type TestTeam,
  type TestUser,
} from '../support/factories';

/**
 * Bulk creates and filtered multi-item updates and deletes against the real database: per-item
 * results, uniqueness within and across requests, limits, owner scope, team isolation, and the
 * single-item rules without `multi`.
 */
let t: TestApp;
let user: TestUser;
let subA: TestSubProfile;
let subB: TestSubProfile;
let team: TestTeam;

const BULK_MAX = 10;

beforeAll(async () => {
  t = await createTestApp(__filename, { BULK_MAX_ITEMS: String(BULK_MAX) });
  ({ user, subA, subB, team } = await createTenants(t));
});
afterAll(async () => t.close());

type Result = { index: number; status: number; _id?: string; error?: { code: string } };

const bulk = (key: string, collection: string, body: unknown) =>
  t
    .http()
    .post(`/data/${collection}/bulk`)
    .set('X-Api-Key', key)
    .send(body as object);
const list = async (key: string, collection: string): Promise<Record<string, unknown>[]> => {
  const res = await t
    .http()
    .get(`/data/${collection}?limit=500&sort=_id&sortOrder=asc`)
    .set('X-Api-Key', key);
  return res.status === 204 ? [] : (res.body as Record<string, unknown>[]);
};

describe('POST /data/{c}/bulk', () => {
  it('creates the good items and reports each bad one, in item order', async () => {
    const res = await bulk(user.apiKey, 'mixed', {
      items: [
        { _id: 'a', n: 1 },
        { _id: 'b', n: 2, _createdAt: 'no' },
        { _id: 'a', n: 3 },
        { n: 4, 'bad"name': 1 },
        { _id: 'c', n: 5 },
      ],
    }).expect(200);
    const results = res.body.results as Result[];
    expect(results.map((r) => r.index)).toEqual([0, 1, 2, 3, 4]);
    // Items 0 and 2 share an _id: unordered, so either may win, and exactly one does.
    const [first, , third] = results;
    expect([first?.status, third?.status].sort()).toEqual([200, 409]);
    const loser = first?.status === 409 ? first : third;
    expect(loser?.error?.code).toBe('DUPLICATE_ITEM');
    expect(results.map((r) => r.status).filter((_, i) => i % 2 === 1)).toEqual([400, 400]);
    expect(results[4]?.status).toBe(200);
    expect(res.body).toMatchObject({ created: 2, failed: 3 });
    const stored = await list(user.apiKey, 'mixed');
    expect(stored.map((i) => [i._id, i.n])).toEqual([
      ['a', first?.status === 200 ? 1 : 3],
      ['c', 5],
    ]);
  });

  it("names each item's own problems as a lone POST would, after the request's problems", async () => {
    const items = [{ $x: 1, ok: 1 }, 5, { a: { b: [[1]] } }, { 'a.b': 1, c: { $d: 2 } }];
    const res = await bulk(user.apiKey, 'itemproblems', { items }).expect(200);
    const results = res.body.results as (Result & { error?: { errors?: unknown } })[];
    expect(results.map((r) => [r.status, r.error?.code, r.error?.errors])).toEqual([
      [
        400,
        'VALIDATION_FAILED',
        [{ field: 'item.$x', message: "field name must not start with '$'" }],
      ],
      [400, 'VALIDATION_FAILED', [{ field: 'item', message: 'must be a JSON object' }]],
      [
        400,
        'VALIDATION_FAILED',
        [
          {
            field: 'item.a.b',
            message:
              'must not hold an array directly inside an array (wrap the inner one in an object)',
          },
        ],
      ],
      [
        400,
        'VALIDATION_FAILED',
        [
          { field: 'item.a.b', message: "field name must not contain '.'" },
          { field: 'item.c.$d', message: "field name must not start with '$'" },
        ],
      ],
    ]);
    // The request's own problems come first and alone: its DTO, its list, its prototype keys.
    const refused = async (body: unknown): Promise<unknown> =>
      (await bulk(user.apiKey, 'itemproblems', body).expect(400)).body.errors;
    expect(await refused({ items, uniqueField: 5 })).toEqual([
      {
        field: 'uniqueField',
        message: 'uniqueField must be shorter than or equal to 256 characters',
      },
      { field: 'uniqueField', message: 'uniqueField must be a string' },
    ]);
    expect(await refused({ items: new Array(BULK_MAX + 1).fill({ $x: 1 }) })).toEqual([
      { field: 'items', message: `must be an array of 1 to ${BULK_MAX} items` },
    ]);
    expect(await refused({ items, authField: '$a' })).toEqual([
      { field: 'authField', message: "must not start with '$'" },
    ]);
    const raw = await t
      .http()
      .post('/data/itemproblems/bulk')
      .set('X-Api-Key', user.apiKey)
      .set('Content-Type', 'application/json')
      .send('{"items":[{"$x":1},{"a":{"__proto__":1}}],"uniqueField":5}')
      .expect(400);
    expect(raw.body.errors).toEqual([
      { field: 'items[1].a.__proto__', message: "field name '__proto__' is a reserved name" },
    ]);
    expect(await list(user.apiKey, 'itemproblems')).toEqual([]);
  });

  it('lets exactly one item hold a uniqueField value, within the request and against stored items', async () => {
    await bulk(user.apiKey, 'uniq', { items: [{ code: 'X' }], uniqueField: 'code' }).expect(200);
    const res = await bulk(user.apiKey, 'uniq', {
      items: [{ code: 'X' }, { code: 'Y' }, { code: 'Y' }, { code: 'Y' }, { code: 'Z' }],
      uniqueField: 'code',
    }).expect(200);
    const results = res.body.results as Result[];
    expect(results[0]?.status).toBe(409);
    expect(results.slice(1, 4).filter((r) => r.status === 200)).toHaveLength(1);
    expect(results.slice(1, 4).filter((r) => r.status === 409)).toHaveLength(2);
    expect(results[4]?.status).toBe(200);
    const codes = (await list(user.apiKey, 'uniq')).map((i) => i.code).sort();
    expect(codes).toEqual(['X', 'Y', 'Z']);
  });

  it("stamps a sub key's items as its own", async () => {
    await bulk(subA.apiKey, 'owned', {
      items: [{ userId: subB.accountId }, { x: 1 }],
    }).expect(200);
    const items = await list(user.apiKey, 'owned');
    expect(items.map((i) => i.userId)).toEqual([subA.accountId, subA.accountId]);
  });

  it.each([
    [{ items: [] }, 'items'],
    [{ items: Array.from({ length: BULK_MAX + 1 }, () => ({})) }, 'items'],
    [{ items: { a: 1 } }, 'items'],
    [{ items: [{}], authField: '_id' }, 'authField'],
    [{ items: [{}], uniqueField: '$x' }, 'uniqueField'],
  ])('refuses %j as a whole (400 naming %s)', async (body, field) => {
    const res = await bulk(user.apiKey, 'refused', body).expect(400);
    expect(res.body.errors.map((e: { field: string }) => e.field)).toContain(field);
  });

  it('replays a retried bulk with the same Idempotency-Key instead of creating again', async () => {
    const send = () =>
      bulk(user.apiKey, 'retried', { items: [{ n: 1 }, { n: 2 }] }).set(
        'Idempotency-Key',
        'bulk-retry-1',
      );
    const first = await send().expect(200);
    const again = await send().expect(200);
    expect(again.headers['idempotent-replayed']).toBe('true');
    expect(again.body).toEqual(first.body);
    expect(await list(user.apiKey, 'retried')).toHaveLength(2);
  });
});

describe('PUT and DELETE /data/{c} by filter', () => {
  beforeAll(async () => {
    const items = [
      ...[1, 2, 3, 4].map((n) => ({ _id: `u${n}`, n, status: 'open' })),
      ...[5, 6].map((n) => ({ _id: `a${n}`, n, status: 'open', userId: subA.accountId })),
      ...[7, 8].map((n) => ({ _id: `b${n}`, n, status: 'open', userId: subB.accountId })),
    ];
    await bulk(user.apiKey, 'orders', { items }).expect(200);
    await bulk(team.apiKey, 'orders', { items: [{ n: 1, status: 'open' }] }).expect(200);
  });

  it('updates every matching item with multi, changing their ETags', async () => {
    const before = await t.http().get('/data/orders/_id/u3').set('X-Api-Key', user.apiKey);
    const res = await t
      .http()
      .put('/data/orders')
      .set('X-Api-Key', user.apiKey)
      .send({ filter: { n: { gte: 3, lte: 4 } }, values: { status: 'late' }, multi: true })
      .expect(200);
    expect(res.body).toEqual({ matched: 2, modified: 2 });
    const after = await t.http().get('/data/orders/_id/u3').set('X-Api-Key', user.apiKey);
    expect(after.body.status).toBe('late');
    expect(after.headers.etag).not.toBe(before.headers.etag);
    // The team's collection of the same name is another namespace.
    const teams = await list(team.apiKey, 'orders');
    expect(teams.map((i) => i.status)).toEqual(['open']);
  });

  it("never lets a sub key's multi write reach another owner's items", async () => {
    const res = await t
      .http()
      .put('/data/orders')
      .set('X-Api-Key', subA.apiKey)
      .send({
        filter: { status: { in: ['open', 'late'] } },
        values: { touched: true },
        multi: true,
      })
      .expect(200);
    expect(res.body).toEqual({ matched: 2, modified: 2 });
    const touched = (await list(user.apiKey, 'orders')).filter((i) => i.touched).map((i) => i._id);
    expect(touched).toEqual(['a5', 'a6']);
    await t
      .http()
      .put('/data/orders')
      .set('X-Api-Key', subA.apiKey)
      .send({ filter: { n: { gt: 0 } }, values: { userId: 'x' }, multi: true })
      .expect(403);
    const deleted = await t
      .http()
      .delete('/data/orders')
      .set('X-Api-Key', subA.apiKey)
      .send({ filter: { n: { gte: 6 } }, multi: true })
      .expect(200);
    expect(deleted.body).toEqual({ deleted: 1 });
    const ids = (await list(user.apiKey, 'orders')).map((i) => i._id);
    expect(ids).toEqual(['a5', 'b7', 'b8', 'u1', 'u2', 'u3', 'u4']);
  });

  it('keeps the single-item rules without multi: one item, else 404 or 409', async () => {
    const one = await t
      .http()
      .put('/data/orders')
      .set('X-Api-Key', user.apiKey)
      .send({ filter: { _id: 'u1' }, values: { status: 'paid' } })
      .expect(200);
    expect(one.body).toMatchObject({ _id: 'u1', status: 'paid' });
    expect(one.headers.etag).toMatch(/^"/);
    await t
      .http()
      .put('/data/orders')
      .set('X-Api-Key', user.apiKey)
      .send({ filter: { status: 'late' }, values: { status: 'x' } })
      .expect(409);
    await t
      .http()
      .delete('/data/orders')
      .set('X-Api-Key', user.apiKey)
      .send({ filter: { n: 99 } })
      .expect(404);
    await t
      .http()
      .delete('/data/orders')
      .set('X-Api-Key', user.apiKey)
      .send({ filter: { _id: 'u2' } })
      .expect(204);
    await t.http().get('/data/orders/_id/u2').set('X-Api-Key', user.apiKey).expect(404);
  });

  it('deletes every matching item with multi and frees their unique values', async () => {
    await bulk(user.apiKey, 'codes', {
      items: [
        { code: 'A', n: 1 },
        { code: 'B', n: 2 },
      ],
      uniqueField: 'code',
    }).expect(200);
    const res = await t
      .http()
      .delete('/data/codes')
      .set('X-Api-Key', user.apiKey)
      .send({ filter: { n: { exists: true } }, multi: true })
      .expect(200);
    expect(res.body).toEqual({ deleted: 2 });
    const again = await bulk(user.apiKey, 'codes', {
      items: [{ code: 'A' }, { code: 'B' }],
      uniqueField: 'code',
    }).expect(200);
    expect((again.body.results as Result[]).map((r) => r.status)).toEqual([200, 200]);
  });

  it('answers zero counts for a collection that does not exist', async () => {
    const res = await t
      .http()
      .put('/data/none')
      .set('X-Api-Key', user.apiKey)
      .send({ filter: { a: 1 }, values: { b: 2 }, multi: true })
      .expect(200);
    expect(res.body).toEqual({ matched: 0, modified: 0 });
  });

  it.each([
    ['DELETE', {}, 'filter'],
    ['DELETE', { multi: true }, 'filter'],
    ['DELETE', { filter: {}, multi: true }, 'filter'],
    ['DELETE', { filter: null, multi: true }, 'filter'],
    ['DELETE', { filter: { a: 1 }, multi: null }, 'multi'],
    ['DELETE', { filter: { a: { $gt: 1 } }, multi: true }, 'filter.a.$gt'],
    ['PUT', { filter: { a: 1 }, multi: true }, 'values'],
    ['PUT', { filter: { a: 1 }, values: { _id: 'x' }, multi: true }, 'values._id'],
  ])('%s %j → 400 naming %s', async (method, body, field) => {
    const req = method === 'PUT' ? t.http().put('/data/orders') : t.http().delete('/data/orders');
    const res = await req.send(body).set('X-Api-Key', user.apiKey).expect(400);
    expect(res.body.errors.map((e: { field: string }) => e.field)).toContain(field);
  });

  it('refuses If-Match with multi', async () => {
    const res = await t
      .http()
      .delete('/data/orders')
      .set('X-Api-Key', user.apiKey)
      .set('If-Match', '"x.1"')
      .send({ filter: { n: 1 }, multi: true })
      .expect(400);
    expect(res.body.errors[0].field).toBe('If-Match');
  });
});
