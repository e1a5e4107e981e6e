import { companionCollection, createTestApp, type TestApp } from '../support/app';
import { createSubKey, createUser, type TestUser } from '../support/factories';
import { as, type Client } from '../support/http';
import { expectProblem } from '../support/problems';
import type { UniqueClaimDocument } from '../../src/data/items/unique/unique-claim.schema';
import { claimKey, CLAIM_GRACE_MS } from '../../src/data/items/unique/unique-values.service';
import { ItemsRepository } from '../../src/data/items/items.repository';
import { faultPoint } from '../support/fault-point';

/**
 * `uniqueField` without an index on the field: creates claim their value first (a document whose
 * `_id` is derived from the value), so it holds under concurrency on one instance here and on
 * several in multi-instance.e2e-spec.ts.
 */
let t: TestApp;
let user: TestUser;
let api: Client;

beforeAll(async () => {
  t = await createTestApp(__filename);
  user = await createUser(t);
  api = as(t, user);
});
afterAll(async () => {
  await t.close();
});

const create = (client: Client, collection: string, item: object, uniqueField = 'code') =>
  client.post(`/data/${collection}`, { item, uniqueField });

async function itemsWith(collection: string, query: Record<string, string>): Promise<unknown[]> {
  const res = await api.get(`/data/${collection}`, { query }).expect(200);
  return res.body as unknown[];
}

/** Writes the claim a create leaves behind when it dies between the claim and the insert. */
async function leaveClaim(collection: string, code: string, itemId: string, ageMs: number) {
  const entry = await t.connection
    .collection('data_collections')
    .findOne({ tenant: user.subject, name: collection });
  const physical = entry?.physical as string;
  // Claims live beside the collection, in the tenant's database.
  await companionCollection<UniqueClaimDocument>(t, entry, 'data_unique_claims').insertOne({
    _id: claimKey({ physical, scope: null, field: 'code', value: code }),
    physical,
    itemId,
    token: 'crashed',
    claimedAt: new Date(Date.now() - ageMs),
  });
}

it('stores exactly one of 50 concurrent creates with one value, and the others name it', async () => {
  const responses = await Promise.all(
    Array.from({ length: 50 }, (_, i) => create(api, 'race', { code: 'A-1', n: i })),
  );
  const stored = responses.filter((r) => r.status === 200);
  expect(stored).toHaveLength(1);
  const winner = stored[0]?.body._id as string;
  for (const refused of responses.filter((r) => r.status !== 200)) {
    expectProblem(refused, 409, 'DUPLICATE_ITEM');
    expect(refused.body.existingId).toBe(winner);
  }
  expect(await itemsWith('race', { code: 'A-1' })).toHaveLength(1);
});

it('tells values of different JSON types apart', async () => {
  const values = [1, '1', true, null];
  const responses = await Promise.all(
    [...values, ...values].map((code) => create(api, 'types', { code })),
  );
  // Each value is stored once, whichever of its two creates gets there first.
  values.forEach((_, i) => {
    const pair = [responses[i]?.status, responses[i + values.length]?.status];
    expect(pair.sort()).toEqual([200, 409]);
  });
});

it('checks in the caller scope: each sub key may hold the value once', async () => {
  const [first, second] = [await createSubKey(t, user), await createSubKey(t, user)];
  const responses = await Promise.all(
    Array.from({ length: 20 }, (_, i) =>
      create(as(t, i % 2 === 0 ? first : second), 'subs', { code: 'S' }),
    ),
  );
  const stored = responses.filter((r) => r.status === 200).map((r) => r.body.userId as string);
  expect(stored.sort()).toEqual([first.accountId, second.accountId].sort());
  // The root sees the whole namespace: the value is taken.
  expectProblem(await create(api, 'subs', { code: 'S' }), 409, 'DUPLICATE_ITEM');
});

it('frees the value as soon as its item is deleted', async () => {
  const first = await create(api, 'freed', { code: 'D' }).expect(200);
  await api.delete(`/data/freed/_id/${first.body._id as string}`).expect(204);
  const again = await create(api, 'freed', { code: 'D' }).expect(200);
  expect(again.body._id).not.toBe(first.body._id);
  expectProblem(await create(api, 'freed', { code: 'D' }), 409, 'DUPLICATE_ITEM');
});

it('frees the value from the moment its item is gone, before the delete gives the claim back', async () => {
  const first = await create(api, 'going', { code: 'G' }).expect(200);
  // A fault point: the delete is held right after the item went, before its claim goes back.
  const point = faultPoint(t.app.get(ItemsRepository), 'deleteById', { at: 'after' });
  try {
    const deleting = api.delete(`/data/going/_id/${first.body._id as string}`).then((r) => r);
    await point.reached;
    // The claim is still there, its item is not: the value is free.
    const again = await create(api, 'going', { code: 'G' }).expect(200);
    point.release();
    expect((await deleting).status).toBe(204);
    // The delete gave back its own claim only: the new item's still refuses the value.
    const refused = await create(api, 'going', { code: 'G' });
    expectProblem(refused, 409, 'DUPLICATE_ITEM');
    expect(refused.body.existingId).toBe(again.body._id);
  } finally {
    point.restore();
  }
});

it('frees the value as soon as a PUT gives its item another one', async () => {
  const first = await create(api, 'moved', { code: 'M1' }).expect(200);
  await api
    .put(`/data/moved/_id/${first.body._id as string}`, { values: { code: 'M2' } })
    .expect(200);
  await create(api, 'moved', { code: 'M1' }).expect(200);
  // A PUT claims nothing: M2 is refused because an item holds it.
  const refused = await create(api, 'moved', { code: 'M2' });
  expectProblem(refused, 409, 'DUPLICATE_ITEM');
  expect(refused.body.existingId).toBe(first.body._id);
});

it('gives the claim back when the item cannot be inserted', async () => {
  await api.post('/data/taken-id', { item: { _id: 'x', code: 'first' } }).expect(200);
  const refused = await create(api, 'taken-id', { _id: 'x', code: 'second' });
  expectProblem(refused, 409, 'DUPLICATE_ITEM');
  expect(refused.body.existingId).toBe('x');
  await create(api, 'taken-id', { _id: 'y', code: 'second' }).expect(200);
});

it('refuses a value whose create is in progress, naming the item it is creating', async () => {
  await create(api, 'pending', { code: 'other' }).expect(200);
  await leaveClaim('pending', 'P', 'in-flight', 1_000);
  const refused = await create(api, 'pending', { code: 'P' });
  expectProblem(refused, 409, 'DUPLICATE_ITEM');
  expect(refused.body.existingId).toBe('in-flight');
});

it('takes over the claim of a create that died, once, under concurrency', async () => {
  await create(api, 'crashed', { code: 'other' }).expect(200);
  await leaveClaim('crashed', 'C', 'never-inserted', CLAIM_GRACE_MS + 1_000);
  const responses = await Promise.all(
    Array.from({ length: 20 }, (_, i) => create(api, 'crashed', { code: 'C', n: i })),
  );
  expect(responses.filter((r) => r.status === 200)).toHaveLength(1);
  for (const refused of responses.filter((r) => r.status !== 200))
    expectProblem(refused, 409, 'DUPLICATE_ITEM');
  expect(await itemsWith('crashed', { code: 'C' })).toHaveLength(1);
});

it('still refuses a value an item holds without a claim (stored before claims, or by a PUT)', async () => {
  const plain = await api.post('/data/legacy', { item: { code: 'L' } }).expect(200);
  const refused = await create(api, 'legacy', { code: 'L' });
  expectProblem(refused, 409, 'DUPLICATE_ITEM');
  expect(refused.body.existingId).toBe(plain.body._id);
});
