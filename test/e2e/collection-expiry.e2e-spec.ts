import { MongoClient } from 'mongodb';
import {
  createTestApp,
  nativeCollection,
  TEST_ADMIN_KEY,
  testDatabaseUri,
  uniqueDbName,
  type TestApp,
} from '../support/app';
import { createSubKey, createTeam, createUser, type TestUser } from '../support/factories';
import { as, type Client } from '../support/http';
import { exportAs } from '../support/ndjson';
import { expectInvalid, expectProblem } from '../support/problems';
import { startService, type Reply, type ServiceProcess } from '../support/service-process';
import { until } from '../support/until';
import { faultPoint } from '../support/fault-point';
import { ExpirySweep } from '../../src/data/rules/expiry/expiry-sweep';
import { ExpiredItemsRepository } from '../../src/data/rules/expiry/expired-items.repository';

/**
 * Collection expiry (docs/data.md, "Expiry"): from the moment an item has expired no read
 * returns it, the sweep deletes it within EXPIRY_SWEEP_MS with one `deleted` event by the
 * system, it no longer holds its uniqueField value, and two instances sweeping one collection
 * record each expiry once.
 */
const SWEEP_MS = 1_500;
const MAX_SECONDS = 86_400;
const SYSTEM = { kind: 'system', id: 'expiry' };

let t: TestApp;
let user: TestUser;
let api: Client;

beforeAll(async () => {
  t = await createTestApp(__filename, {
    EXPIRY_SWEEP_MS: String(SWEEP_MS),
    EXPIRY_MAX_SECONDS: String(MAX_SECONDS),
    MAX_COLLECTIONS: '8',
  });
  user = await createUser(t);
  api = as(t, user);
}, 60_000);
afterAll(async () => {
  await t?.close();
});

const iso = (ms: number) => new Date(ms).toISOString();

interface FeedEvent {
  type: string;
  resource: string;
  key: string;
  at: string;
  actor: { kind: string; id: string };
}

/** Every event of a collection's feed (pages of 500). */
async function eventsOf(client: Client, collection: string): Promise<FeedEvent[]> {
  const events: FeedEvent[] = [];
  let after = '0';
  for (;;) {
    const res = await client
      .get('/events', { query: { collection, after, limit: '500' } })
      .expect(200);
    const page = res.body as { events: FeedEvent[]; next: string };
    events.push(...page.events);
    if (page.events.length < 500) return events;
    after = page.next;
  }
}

async function nativeIds(collection: string): Promise<Set<string>> {
  const entry = await t.connection
    .collection('data_collections')
    .findOne({ tenant: user.subject, name: collection });
  const docs = await nativeCollection(t, entry)
    .find({}, { projection: { _id: 1 } })
    .toArray();
  return new Set(docs.map((doc) => String(doc._id)));
}

describe('the expiry rule', () => {
  it('is set, read and removed, each change an updated event of the collection', async () => {
    await api.get('/data/rules/expiry').expect(404);
    const put = await api
      .put('/data/rules/expiry', { field: 'session.endsAt', afterSeconds: 60 })
      .expect(200);
    expect(put.body).toEqual({
      field: 'session.endsAt',
      afterSeconds: 60,
      changedAt: expect.stringMatching(/Z$/) as string,
    });
    // The PUT created the collection, within the quota.
    const list = await api.get('/data').expect(200);
    expect((list.body as { name: string }[]).map((c) => c.name)).toContain('rules');
    expect((await api.get('/data/rules/expiry').expect(200)).body).toEqual(put.body);
    await api.put('/data/rules/expiry', { field: '_updatedAt', afterSeconds: 5 }).expect(200);
    expect((await api.get('/data/rules/expiry').expect(200)).body).toMatchObject({
      field: '_updatedAt',
      afterSeconds: 5,
    });
    await api.delete('/data/rules/expiry').expect(204);
    expectProblem(await api.get('/data/rules/expiry'), 404, 'EXPIRY_NOT_FOUND');
    expectProblem(await api.delete('/data/rules/expiry'), 404, 'EXPIRY_NOT_FOUND');
    const events = (await eventsOf(api, 'rules')).filter((e) => e.resource === 'collection');
    expect(events.map((e) => e.type)).toEqual(['created', 'updated', 'updated', 'updated']);
  });

  it('answers 404 for a collection that does not exist, and creates none', async () => {
    expectProblem(await api.get('/data/nothing/expiry'), 404, 'EXPIRY_NOT_FOUND');
    expectProblem(await api.delete('/data/nothing/expiry'), 404, 'EXPIRY_NOT_FOUND');
    const list = await api.get('/data').expect(200);
    expect((list.body as { name: string }[]).map((c) => c.name)).not.toContain('nothing');
  });

  it.each([
    [{ field: 'expiresAt', afterSeconds: 0 }, 'afterSeconds'],
    [{ field: 'expiresAt', afterSeconds: 1.5 }, 'afterSeconds'],
    [{ field: 'expiresAt', afterSeconds: '60' }, 'afterSeconds'],
    [{ field: 'expiresAt', afterSeconds: null }, 'afterSeconds'],
    [{ field: 'expiresAt' }, 'afterSeconds'],
    [{ field: 'expiresAt', afterSeconds: MAX_SECONDS + 1 }, 'afterSeconds'],
    [{ field: null, afterSeconds: 60 }, 'field'],
    [{ afterSeconds: 60 }, 'field'],
    [{ field: '', afterSeconds: 60 }, 'field'],
    [{ field: '_id', afterSeconds: 60 }, 'field'],
    [{ field: '_createdAt.day', afterSeconds: 60 }, 'field'],
    [{ field: '_revision', afterSeconds: 60 }, 'field'],
    [{ field: 'a..b', afterSeconds: 60 }, 'field'],
    [{ field: '$where', afterSeconds: 60 }, 'field'],
    [{ field: 'expiresAt', afterSeconds: 60, ttl: true }, 'ttl'],
  ])('refuses %j with a 400 naming %s', async (body, member) => {
    const res = await api.put('/data/refused/expiry', body);
    expectInvalid(res, member);
    const list = await api.get('/data').expect(200);
    expect((list.body as { name: string }[]).map((c) => c.name)).not.toContain('refused');
  });

  it('creates its collection within MAX_COLLECTIONS', async () => {
    const other = as(t, await createUser(t));
    for (let i = 0; i < 8; i += 1)
      await other.put(`/data/c${i}/expiry`, { field: '_createdAt', afterSeconds: 60 }).expect(200);
    const refused = await other.put('/data/c8/expiry', { field: '_createdAt', afterSeconds: 60 });
    expectProblem(refused, 409, 'COLLECTION_QUOTA_EXCEEDED');
    expectProblem(await other.get('/data/c8/expiry'), 404, 'EXPIRY_NOT_FOUND');
  });

  it("is a team key's to set on the team's collections, apart from its members' own", async () => {
    const team = as(t, await createTeam(t));
    await team.put('/data/shared/expiry', { field: '_updatedAt', afterSeconds: 7 }).expect(200);
    expect((await team.get('/data/shared/expiry').expect(200)).body).toMatchObject({
      field: '_updatedAt',
      afterSeconds: 7,
    });
    expectProblem(await api.get('/data/shared/expiry'), 404, 'EXPIRY_NOT_FOUND');
    await team.delete('/data/shared/expiry').expect(204);
  });

  it('is refused to sub keys (403), for reading too', async () => {
    await api.put('/data/subs/expiry', { field: '_createdAt', afterSeconds: 60 }).expect(200);
    const sub = as(t, await createSubKey(t, user));
    for (const res of [
      await sub.get('/data/subs/expiry'),
      await sub.put('/data/subs/expiry', { field: '_createdAt', afterSeconds: 5 }),
      await sub.delete('/data/subs/expiry'),
    ])
      expectProblem(res, 403, 'FORBIDDEN');
    expect((await api.get('/data/subs/expiry').expect(200)).body).toMatchObject({
      afterSeconds: 60,
    });
  });
});

/** An item with the instant it expires (Infinity: never). */
interface Expiring {
  id: string;
  expiresAt: number;
}

/**
 * Asserts what one read showed: no item that had expired when the request was sent, every item
 * that had not when its answer came. Items that expired while it ran may be either.
 */
function checkShown(what: string, shown: string[], items: Expiring[], sent: number, done: number) {
  const ids = new Set(shown);
  const wrong = items.filter(
    (item) =>
      (item.expiresAt <= sent && ids.has(item.id)) || (item.expiresAt > done && !ids.has(item.id)),
  );
  expect({ what, at: iso(sent), wrong }).toEqual({ what, at: iso(sent), wrong: [] });
}

async function readsOf(collection: string, items: Expiring[]): Promise<void> {
  const sent = Date.now();
  const [list, count, groups, exported, account] = await Promise.all([
    api.get(`/data/${collection}`, { query: { limit: '500' } }),
    api.get(`/data/${collection}/count`),
    api.get(`/data/${collection}/aggregate`, { query: { groupBy: 'kind' } }),
    exportAs(t, user, { collections: collection }),
    exportAs(t, user, {}, { path: '/me/export' }),
  ]);
  const byId = await Promise.all(
    items
      .filter((item) => Number.isFinite(item.expiresAt))
      // By a field's value: `tag` holds the item's _id.
      .map(async (item) => ({
        id: item.id,
        res: await api.get(`/data/${collection}/tag/${item.id}`),
      })),
  );
  const done = Date.now();
  const listed = list.status === 204 ? [] : (list.body as { _id: string }[]).map((i) => i._id);
  checkShown(`${collection} list`, listed, items, sent, done);
  const exportedIds = exported.lines
    .filter((line) => line.type === 'item')
    .map((line) => (line.item as { _id: string })._id);
  checkShown(`${collection} export`, exportedIds, items, sent, done);
  const accountIds = account.lines
    .filter((line) => line.type === 'item' && line.collection === collection)
    .map((line) => (line.item as { _id: string })._id);
  checkShown(`${collection} account export`, accountIds, items, sent, done);
  const found = byId.filter(({ res }) => res.status === 200).map(({ id }) => id);
  expect(byId.every(({ res }) => res.status === 200 || res.status === 404)).toBe(true);
  checkShown(
    `${collection} get`,
    found,
    items.filter((item) => Number.isFinite(item.expiresAt)),
    sent,
    done,
  );
  const live = (at: number) => items.filter((item) => item.expiresAt > at).length;
  const counted = (count.body as { count: number }).count;
  const grouped = (groups.body as { groups: { value: number }[] }).groups.reduce(
    (sum, group) => sum + group.value,
    0,
  );
  for (const [what, n] of [
    ['count', counted],
    ['aggregate', grouped],
  ] as const) {
    expect({ what, n, atLeast: n >= live(done), atMost: n <= live(sent) }).toEqual({
      what,
      n,
      atLeast: true,
      atMost: true,
    });
  }
}

/**
 * Records when each sweep of the app's ExpirySweep started and ended (this process's clock, the
 * one the events' times come from), until `stop` is called.
 */
function recordSweeps(): { sweeps: { start: number; end: number }[]; stop: () => void } {
  type Sweeper = { run: () => Promise<void> };
  const prototype = ExpirySweep.prototype as unknown as Sweeper;
  const run = prototype.run;
  const sweeps: { start: number; end: number }[] = [];
  const spy = jest.spyOn(prototype, 'run').mockImplementation(async function (this: Sweeper) {
    const start = Date.now();
    try {
      await run.call(this);
    } finally {
      sweeps.push({ start, end: Date.now() });
    }
  });
  return { sweeps, stop: () => spy.mockRestore() };
}

describe('expired items', () => {
  it('are never read after they expire, and are deleted by the first sweep after with one system event each', async () => {
    // When each item is deleted is judged against the sweeps that ran, not against the clock:
    // on a loaded machine a sweep may start late or take long, which is the scheduler's and the
    // machine's doing (a sweep starts every EXPIRY_SWEEP_MS: expiry-sweep.spec.ts).
    const recorded = recordSweeps();
    const t0 = Date.now();
    // A field-time rule, set before the items: each expires 1 s after its endsAt.
    await api.put('/data/sessions/expiry', { field: 'endsAt', afterSeconds: 1 }).expect(200);
    const timed: [string, unknown, number][] = [
      ['past', iso(t0 - 60_000), t0 - 59_000],
      ['soon', iso(t0 + 1_500), t0 + 2_500],
      ['later', iso(t0 + 3_000), t0 + 4_000],
      ['digits', iso(t0 + 2_000).replace('Z', '4567Z'), t0 + 3_001],
      [
        'lower',
        iso(t0 + 2_500)
          .replace('T', 't')
          .replace('Z', 'z'),
        t0 + 3_500,
      ],
      ['zero-offset', iso(t0 + 1_000).replace('Z', '+00:00'), t0 + 2_000],
      // Never: not a UTC RFC 3339 time.
      ['offset', iso(t0 - 60_000).replace('Z', '+02:00'), Infinity],
      ['number', t0 - 60_000, Infinity],
      ['null', null, Infinity],
      ['malformed', 'yesterday', Infinity],
      ['future', '2999-01-01T00:00:00Z', Infinity],
    ];
    await api
      .post('/data/sessions/bulk', {
        items: [
          ...timed.map(([id, endsAt]) => ({ _id: id, tag: id, kind: 'session', endsAt })),
          { _id: 'absent', tag: 'absent', kind: 'session' },
        ],
      })
      .expect(200);
    const sessionsStored = Date.now();
    const sessions: Expiring[] = [
      ...timed.map(([id, , expiresAt]) => ({ id, expiresAt })),
      { id: 'absent', expiresAt: Infinity },
    ];
    // A _createdAt rule set after the items: items stored before a rule expire by it too.
    const logins: Expiring[] = [];
    for (const id of ['l1', 'l2', 'l3']) {
      const res = await api
        .post('/data/logins', { item: { _id: id, tag: id, kind: 'login' } })
        .expect(200);
      logins.push({ id, expiresAt: Date.parse(res.body._createdAt as string) + 3_000 });
      await new Promise((resolve) => setTimeout(resolve, 400));
    }
    await api.put('/data/logins/expiry', { field: '_createdAt', afterSeconds: 3 }).expect(200);
    const loginsRuled = Date.now();

    const lastExpiry = Math.max(
      ...[...sessions, ...logins].map((i) => i.expiresAt).filter(Number.isFinite),
    );
    // Every 100 ms until the last one expired: no read shows an expired item.
    while (Date.now() < lastExpiry + 300) {
      await Promise.all([readsOf('sessions', sessions), readsOf('logins', logins)]);
      await new Promise((resolve) => setTimeout(resolve, 100));
    }

    const expiring = [...sessions, ...logins].filter((item) => Number.isFinite(item.expiresAt));
    await until(
      'the sweep deleted every expired item',
      async () => {
        const stored = new Set([...(await nativeIds('sessions')), ...(await nativeIds('logins'))]);
        return expiring.every((item) => !stored.has(item.id));
      },
      lastExpiry + 30_000 - Date.now(),
    );
    // The sweep that deleted the last of them has ended (a call while one runs joins it).
    await t.app.get(ExpirySweep).runNow();
    recorded.stop();
    // What never expires is still stored, and read.
    const kept = sessions.filter((item) => !Number.isFinite(item.expiresAt)).map((i) => i.id);
    expect([...(await nativeIds('sessions'))].sort()).toEqual([...kept].sort());
    const listed = await api.get('/data/sessions').expect(200);
    expect((listed.body as { _id: string }[]).map((i) => i._id).sort()).toEqual([...kept].sort());

    // An item is due from its expiry, or from when it was stored under the rule if that is later.
    for (const [collection, items, since] of [
      ['sessions', sessions, sessionsStored],
      ['logins', logins, loginsRuled],
    ] as const) {
      const deleted = (await eventsOf(api, collection)).filter((e) => e.type === 'deleted');
      for (const item of items) {
        const mine = deleted.filter((e) => e.key === item.id);
        if (!Number.isFinite(item.expiresAt)) {
          expect({ id: item.id, events: mine }).toEqual({ id: item.id, events: [] });
          continue;
        }
        expect({ id: item.id, events: mine.length }).toEqual({ id: item.id, events: 1 });
        expect(mine[0]?.actor).toEqual(SYSTEM);
        // Deleted by the first sweep that started once it was due, at the latest.
        const due = Math.max(item.expiresAt, since);
        const first = recorded.sweeps.find((sweep) => sweep.start >= due);
        expect({
          id: item.id,
          byFirstSweep: Date.parse(mine[0]?.at ?? '') <= (first?.end ?? 0),
        }).toEqual({ id: item.id, byFirstSweep: true });
      }
    }
  }, 60_000);

  it('no longer hold their uniqueField value, their _id, or a unique index key', async () => {
    await api.put('/data/codes/expiry', { field: 'validUntil', afterSeconds: 1 }).expect(200);
    await api.post('/data/codes/index', { field: 'code', unique: true }).expect(200);
    const past = iso(Date.now() - 60_000);
    await api
      .post('/data/codes', {
        item: { _id: 'old', code: 'A', validUntil: past },
        uniqueField: 'code',
      })
      .expect(200);
    await api
      .post('/data/codes', { item: { _id: 'gone', code: 'B', validUntil: past } })
      .expect(200);
    // A live holder still refuses its value.
    await api
      .post('/data/codes', { item: { _id: 'live', code: 'C' }, uniqueField: 'code' })
      .expect(200);
    expectProblem(
      await api.post('/data/codes', { item: { code: 'C' }, uniqueField: 'code' }),
      409,
      'DUPLICATE_ITEM',
    );

    const reused = await api.post('/data/codes', { item: { code: 'A' }, uniqueField: 'code' });
    expect(reused.status).toBe(200);
    await api.post('/data/codes', { item: { _id: 'gone', code: 'D' } }).expect(200);
    expect((await api.get('/data/codes/_id/gone').expect(200)).body).toMatchObject({ code: 'D' });
    expect((await api.get('/data/codes/code/A').expect(200)).body._id).toBe(reused.body._id);

    const deleted = (await eventsOf(api, 'codes')).filter((e) => e.type === 'deleted');
    expect(deleted.map((e) => [e.key, e.actor]).sort()).toEqual([
      ['gone', SYSTEM],
      ['old', SYSTEM],
    ]);
  });

  it('free their uniqueField value from the moment the sweep deleted them', async () => {
    await api.put('/data/passes/expiry', { field: 'validUntil', afterSeconds: 1 }).expect(200);
    const past = iso(Date.now() - 60_000);
    await api
      .post('/data/passes', {
        item: { _id: 'expired', code: 'E', validUntil: past },
        uniqueField: 'code',
      })
      .expect(200);
    // A fault point: the sweep is held right after it deleted the item, before the item's claim
    // of its value goes back.
    const point = faultPoint(t.app.get(ExpiredItemsRepository), 'deleteIfExpired', {
      at: 'after',
      when: (deleted) => deleted === true,
    });
    try {
      const sweep = t.app.get(ExpirySweep).runNow();
      await point.reached;
      const created = await api.post('/data/passes', { item: { code: 'E' }, uniqueField: 'code' });
      expect(created.status).toBe(200);
      point.release();
      await sweep;
      expectProblem(
        await api.post('/data/passes', { item: { code: 'E' }, uniqueField: 'code' }),
        409,
        'DUPLICATE_ITEM',
      );
    } finally {
      point.restore();
    }
  });
});

describe('two instances sweeping one database', () => {
  const ITEMS = 600;
  const dbName = uniqueDbName(`${__filename}-multi`);
  let a: ServiceProcess;
  let b: ServiceProcess;

  beforeAll(async () => {
    const env = { MONGODB_DB_NAME: dbName, EXPIRY_SWEEP_MS: '100', LOG_LEVEL: 'debug' };
    [a, b] = await Promise.all([startService(env), startService(env)]);
  }, 180_000);

  afterAll(async () => {
    await Promise.all([a?.kill(), b?.kill()]);
    const client = new MongoClient(testDatabaseUri());
    try {
      await client.db(dbName).dropDatabase();
    } finally {
      await client.close();
    }
  });

  const bodyOf = (reply: Reply) => JSON.parse(reply.body) as Record<string, unknown>;

  it('record every expiry exactly once while both sweep every 100 ms', async () => {
    const created = await a.send(
      'POST',
      '/admin/users',
      { 'X-Api-Key': TEST_ADMIN_KEY },
      {
        email: `expiry-${Date.now()}@example.com`,
      },
    );
    const key = { 'X-Api-Key': bodyOf(created).apiKey as string };
    // Every item is stored expired before the rule exists, so they all expire at the instant
    // the rule is set: both instances, sweeping every 100 ms, then find the same expired items
    // and delete them side by side.
    const past = iso(Date.now() - 60_000);
    for (let start = 0; start < ITEMS; start += 200) {
      const items = Array.from({ length: 200 }, (_, i) => ({
        _id: `i${String(start + i).padStart(4, '0')}`,
        until: past,
      }));
      expect((await b.send('POST', '/data/batch/bulk', key, { items })).status).toBe(200);
    }
    const rule = await a.send('PUT', '/data/batch/expiry', key, {
      field: 'until',
      afterSeconds: 1,
    });
    expect(rule.status).toBe(200);

    const countOf = async (service: ServiceProcess) =>
      bodyOf(await service.send('GET', '/data/batch/count', key)).count as number;
    await until(
      'both instances deleted every item',
      async () => {
        const events = await feedDeletes(a, key);
        return events.length >= ITEMS && (await countOf(a)) === 0;
      },
      60_000,
    );

    const events = await feedDeletes(b, key);
    const perId = new Map<string, number>();
    for (const event of events) perId.set(event.key, (perId.get(event.key) ?? 0) + 1);
    expect(perId.size).toBe(ITEMS);
    expect([...perId.values()].filter((n) => n !== 1)).toEqual([]);
    expect(events.every((e) => e.actor.kind === 'system' && e.actor.id === 'expiry')).toBe(true);

    // Every deletion was recorded by the instance that made it. Whether the two sweeps happened
    // to find the same items here is the machine's timing, so it is reported, not asserted:
    // collection-expiry-contest.e2e-spec.ts makes that contest happen with a fault point.
    const rounds = (service: ServiceProcess) =>
      [...service.stdout().matchAll(/found (\d+), deleted (\d+)/g)].map((m) => ({
        found: Number(m[1]),
        deleted: Number(m[2]),
      }));
    const [ra, rb] = [rounds(a), rounds(b)];
    const sum = (rs: { found: number; deleted: number }[], k: 'found' | 'deleted') =>
      rs.reduce((n, r) => n + r[k], 0);
    expect(sum(ra, 'deleted') + sum(rb, 'deleted')).toBe(ITEMS);
    process.stderr.write(
      `two sweeping instances: a found ${sum(ra, 'found')} and deleted ${sum(ra, 'deleted')}, ` +
        `b found ${sum(rb, 'found')} and deleted ${sum(rb, 'deleted')}, of ${ITEMS}\n`,
    );
  }, 120_000);

  async function feedDeletes(service: ServiceProcess, key: Record<string, string>) {
    const events: FeedEvent[] = [];
    let after = '0';
    for (;;) {
      const reply = await service.send(
        'GET',
        `/events?collection=batch&type=deleted&limit=500&after=${after}`,
        key,
      );
      const page = bodyOf(reply) as unknown as { events: FeedEvent[]; next: string };
      events.push(...page.events);
      if (page.events.length < 500) return events;
      after = page.next;
    }
  }
});
