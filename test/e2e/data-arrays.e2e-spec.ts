import { createTestApp, type TestApp } from '../support/app';
import {
  createTenants,
  type TestSubProfile,
  type TestTeam,
  type TestUser,
} from '../support/factories';

/**
 * Array operations (PATCH) and find-or-create (POST with onConflict "return") against the real
 * database: every operation and refusal, ETags, owner rules, team isolation, and concurrency.
 */
let t: TestApp;
let user: TestUser;
let sub: TestSubProfile;
let other: TestSubProfile;
let team: TestTeam;

beforeAll(async () => {
  t = await createTestApp(__filename);
  ({ user, subA: sub, subB: other, team } = await createTenants(t));
});
afterAll(async () => t.close());

const create = (key: string, collection: string, item: Record<string, unknown>) =>
  t.http().post(`/data/${collection}`).set('X-Api-Key', key).send({ item }).expect(200);
const patch = (key: string, path: string, body: unknown) =>
  t
    .http()
    .patch(`/data/${path}`)
    .set('X-Api-Key', key)
    .send(body as object);

describe('array operations', () => {
  beforeEach(async () => {
    await t.http().delete('/data/carts/_id/c1').set('X-Api-Key', user.apiKey);
    await create(user.apiKey, 'carts', {
      _id: 'c1',
      code: 'C-1',
      tags: ['a'],
      order: {
        lines: [
          { sku: 'A', qty: 1 },
          { sku: 'B', qty: 2 },
          { sku: 'A', qty: 3 },
        ],
      },
      note: 'text',
    });
  });

  it('pushes onto an array, creates a missing one, and moves the ETag', async () => {
    const before = await t.http().get('/data/carts/_id/c1').set('X-Api-Key', user.apiKey);
    const res = await patch(user.apiKey, 'carts/_id/c1', {
      push: { field: 'tags', value: { k: 'b' } },
    }).expect(200);
    expect(res.body.tags).toEqual(['a', { k: 'b' }]);
    expect(res.headers.etag).toMatch(/^"/);
    expect(res.headers.etag).not.toBe(before.headers.etag);
    const fresh = await patch(user.apiKey, 'carts/code/C-1', {
      push: { field: 'history', value: 1 },
    }).expect(200);
    expect(fresh.body.history).toEqual([1]);
  });

  it('updates the first element that matches, inside a nested path', async () => {
    const res = await patch(user.apiKey, 'carts/_id/c1', {
      updateElement: { field: 'order.lines', match: { sku: 'A' }, values: { qty: 9, gift: true } },
    }).expect(200);
    expect(res.body.order.lines).toEqual([
      { sku: 'A', qty: 9, gift: true },
      { sku: 'B', qty: 2 },
      { sku: 'A', qty: 3 },
    ]);
  });

  it('removes an element by position, and every element that matches', async () => {
    const at = await patch(user.apiKey, 'carts/_id/c1', {
      removeElement: { field: 'order.lines', position: 1 },
    }).expect(200);
    expect(at.body.order.lines).toEqual([
      { sku: 'A', qty: 1 },
      { sku: 'A', qty: 3 },
    ]);
    const matching = await patch(user.apiKey, 'carts/_id/c1', {
      removeElement: { field: 'order.lines', match: { sku: 'A' } },
    }).expect(200);
    expect(matching.body.order.lines).toEqual([]);
  });

  it.each([
    [{ removeElement: { field: 'order.lines', position: 3 } }, 404, 'ELEMENT_NOT_FOUND'],
    [{ removeElement: { field: 'order.lines', match: { sku: 'Z' } } }, 404, 'ELEMENT_NOT_FOUND'],
    [
      { updateElement: { field: 'tags', match: { sku: 'A' }, values: { q: 1 } } },
      404,
      'ELEMENT_NOT_FOUND',
    ],
    [{ removeElement: { field: 'missing', position: 0 } }, 404, 'ELEMENT_NOT_FOUND'],
    [{ push: { field: 'note', value: 1 } }, 409, 'NOT_AN_ARRAY'],
    [{ push: { field: 'note.deeper', value: 1 } }, 409, 'NOT_AN_ARRAY'],
    [{ push: { field: 'order.lines.0', value: 1 } }, 409, 'NOT_AN_ARRAY'],
    [{ push: { field: 'tags ', value: 1 } }, 400, 'VALIDATION_FAILED'],
    [{ push: { field: 'tags', value: [1] } }, 400, 'VALIDATION_FAILED'],
    [{ push: { field: '_id', value: 1 } }, 400, 'VALIDATION_FAILED'],
    [{ push: { field: 'tags' } }, 400, 'VALIDATION_FAILED'],
    [
      { push: { field: 'tags', value: 1 }, removeElement: { field: 'tags', position: 0 } },
      400,
      'VALIDATION_FAILED',
    ],
    [{}, 400, 'VALIDATION_FAILED'],
    [{ removeElement: { field: 'tags', position: -1 } }, 400, 'VALIDATION_FAILED'],
    [{ removeElement: { field: 'tags', position: 0, match: { a: 1 } } }, 400, 'VALIDATION_FAILED'],
    [{ updateElement: { field: 'tags', match: {}, values: { a: 1 } } }, 400, 'VALIDATION_FAILED'],
    [
      { updateElement: { field: 'tags', match: { a: { b: 1 } }, values: { a: 1 } } },
      400,
      'VALIDATION_FAILED',
    ],
    [{ push: { field: 'a.$b', value: 1 } }, 400, 'VALIDATION_FAILED'],
  ])('%j → %d %s, and nothing changes', async (body, status, code) => {
    const before = await t.http().get('/data/carts/_id/c1').set('X-Api-Key', user.apiKey);
    const res = await patch(user.apiKey, 'carts/_id/c1', body).expect(status);
    expect(res.body.code).toBe(code);
    const after = await t.http().get('/data/carts/_id/c1').set('X-Api-Key', user.apiKey);
    expect(after.headers.etag).toBe(before.headers.etag);
  });

  it('honours If-Match', async () => {
    const read = await t.http().get('/data/carts/_id/c1').set('X-Api-Key', user.apiKey);
    await patch(user.apiKey, 'carts/_id/c1', { push: { field: 'tags', value: 'x' } })
      .set('If-Match', read.headers.etag as string)
      .expect(200);
    const stale = await patch(user.apiKey, 'carts/_id/c1', { push: { field: 'tags', value: 'y' } })
      .set('If-Match', read.headers.etag as string)
      .expect(412);
    expect(stale.headers.etag).toMatch(/^"/);
  });

  it('applies 20 concurrent pushes to one item, none lost', async () => {
    await Promise.all(
      Array.from({ length: 20 }, (_, i) =>
        patch(user.apiKey, 'carts/_id/c1', { push: { field: 'tags', value: i } }).expect(200),
      ),
    );
    const item = await t.http().get('/data/carts/_id/c1').set('X-Api-Key', user.apiKey);
    expect((item.body.tags as unknown[]).slice(1).sort((a, b) => Number(a) - Number(b))).toEqual(
      Array.from({ length: 20 }, (_, i) => i),
    );
  });
});

describe('array operations and owners', () => {
  beforeAll(async () => {
    await create(user.apiKey, 'lists', { _id: 'mine', userId: sub.accountId, tags: [] });
    await create(user.apiKey, 'lists', { _id: 'theirs', userId: other.accountId, tags: [] });
    await create(team.apiKey, 'lists', { _id: 'team', tags: [] });
  });

  it("lets a sub key change its own item's arrays but never another owner's, nor its owner field", async () => {
    await patch(sub.apiKey, 'lists/_id/mine', { push: { field: 'tags', value: 1 } }).expect(200);
    await patch(sub.apiKey, 'lists/_id/theirs', { push: { field: 'tags', value: 1 } }).expect(404);
    await patch(sub.apiKey, 'lists/_id/mine', { push: { field: 'userId', value: 1 } }).expect(403);
    const theirs = await t.http().get('/data/lists/_id/theirs').set('X-Api-Key', user.apiKey);
    expect(theirs.body.tags).toEqual([]);
  });

  it("never reaches another tenant's item of the same name", async () => {
    await patch(user.apiKey, 'lists/_id/team', { push: { field: 'tags', value: 1 } }).expect(404);
    const item = await t.http().get('/data/lists/_id/team').set('X-Api-Key', team.apiKey);
    expect(item.body.tags).toEqual([]);
  });
});

describe('find-or-create', () => {
  const findOrCreate = (key: string, item: Record<string, unknown>) =>
    t
      .http()
      .post('/data/customers')
      .set('X-Api-Key', key)
      .send({ item, uniqueField: 'email', onConflict: 'return' });

  it('creates once, then answers the existing item with X-Item-Created: false', async () => {
    const first = await findOrCreate(user.apiKey, { email: 'a@x.io', name: 'A' }).expect(200);
    expect(first.headers['x-item-created']).toBe('true');
    const again = await findOrCreate(user.apiKey, { email: 'a@x.io', name: 'other' }).expect(200);
    expect(again.headers['x-item-created']).toBe('false');
    expect(again.body).toEqual(first.body);
    expect(again.headers.etag).toBe(first.headers.etag);
  });

  it('gives 20 concurrent requests one item: one says created, all answer its _id', async () => {
    const answers = await Promise.all(
      Array.from({ length: 20 }, () => findOrCreate(user.apiKey, { email: 'race@x.io' })),
    );
    expect(answers.map((a) => a.status)).toEqual(Array.from({ length: 20 }, () => 200));
    expect(new Set(answers.map((a) => a.body._id)).size).toBe(1);
    expect(answers.filter((a) => a.headers['x-item-created'] === 'true')).toHaveLength(1);
    const count = await t
      .http()
      .get('/data/customers/count?email=race@x.io')
      .set('X-Api-Key', user.apiKey)
      .expect(200);
    expect(count.body).toEqual({ count: 1 });
  });

  it("confines a sub key to its own items: another owner's value is not found, so it creates", async () => {
    const mine = await findOrCreate(sub.apiKey, { email: 'a@x.io' }).expect(200);
    expect(mine.headers['x-item-created']).toBe('true');
    expect(mine.body.userId).toBe(sub.accountId);
    const again = await findOrCreate(sub.apiKey, { email: 'a@x.io' }).expect(200);
    expect(again.body._id).toBe(mine.body._id);
  });

  it('refuses onConflict without uniqueField, an unknown mode, and null', async () => {
    for (const body of [
      { item: { a: 1 }, onConflict: 'return' },
      { item: { a: 1 }, uniqueField: 'a', onConflict: 'merge' },
      { item: { a: 1 }, uniqueField: 'a', onConflict: null },
    ]) {
      const res = await t
        .http()
        .post('/data/customers')
        .set('X-Api-Key', user.apiKey)
        .send(body)
        .expect(400);
      expect(res.body.errors.map((e: { field: string }) => e.field)).toContain('onConflict');
    }
  });

  it('keeps answering 409 without onConflict', async () => {
    await t
      .http()
      .post('/data/customers')
      .set('X-Api-Key', user.apiKey)
      .send({ item: { email: 'a@x.io' }, uniqueField: 'email' })
      .expect(409);
  });
});
