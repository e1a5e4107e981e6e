import { ExpiredItemsRepository } from '../../src/data/rules/expiry/expired-items.repository';
import { ExpirySweep } from '../../src/data/rules/expiry/expiry-sweep';
import { createTestApp, uniqueDbName, type TestApp } from '../support/app';
import { createUser, type TestUser } from '../support/factories';
import { faultPoint } from '../support/fault-point';

/**
 * Two instances expiring the same items record each expiry once — with the contest made to
 * happen, not hoped for: instance a's sweep finds the expired items and is held (a fault point)
 * before its first delete; instance b's sweep then finds the same items and deletes them all;
 * a goes on and deletes nothing. Each item has exactly one `deleted` event, by the system.
 */
let a: TestApp;
let b: TestApp;
let user: TestUser;

beforeAll(async () => {
  // Sweeps only when the test says so.
  const shared = { MONGODB_DB_NAME: uniqueDbName(__filename), EXPIRY_SWEEP_MS: '86400000' };
  a = await createTestApp(__filename, shared);
  b = await createTestApp(__filename, shared);
  user = await createUser(a);
});
afterAll(async () => {
  await a?.close();
  await b?.close();
});

const ITEMS = 30;

it('records each expiry once when two instances found the same expired items', async () => {
  const key = { 'X-Api-Key': user.apiKey };
  const past = new Date(Date.now() - 60_000).toISOString();
  const items = Array.from({ length: ITEMS }, (_, i) => ({ _id: `x${i}`, until: past }));
  await a.http().post('/data/contest/bulk').set(key).send({ items }).expect(200);
  const start = Number((await a.http().get('/events?limit=1').set(key)).body.next ?? 0);
  await a
    .http()
    .put('/data/contest/expiry')
    .set(key)
    .send({ field: 'until', afterSeconds: 1 })
    .expect(200);

  const point = faultPoint(a.app.get(ExpiredItemsRepository), 'deleteIfExpired', {
    at: 'before',
  });
  const deletes = point.spy;
  try {
    const sweepA = a.app.get(ExpirySweep).runNow();
    await point.reached;
    // a has found every item and waits before deleting the first: b finds them too.
    await b.app.get(ExpirySweep).runNow();
    point.release();
    await sweepA;
    // a tried every item it had found, and the database told it none was its to delete.
    expect(deletes).toHaveBeenCalledTimes(ITEMS);
    for (const result of deletes.mock.results)
      await expect(result.value as Promise<boolean>).resolves.toBe(false);
  } finally {
    point.restore();
  }

  const events = (
    await b.http().get(`/events?after=${start}&collection=contest&type=deleted&limit=500`).set(key)
  ).body.events as { key: string; actor: { kind: string; id: string } }[];
  expect(events.map((e) => e.key).sort()).toEqual(items.map((i) => i._id).sort());
  expect(events.every((e) => e.actor.kind === 'system' && e.actor.id === 'expiry')).toBe(true);
  expect((await a.http().get('/data/contest/count').set(key)).body.count).toBe(0);
});
