import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import fc from 'fast-check';
import { createTestApp, TEST_ADMIN_KEY, uniqueDbName, type TestApp } from '../support/app';
import { createSubKey, createUser, type TestSubProfile, type TestUser } from '../support/factories';
import { expectInvalid, expectProblem } from '../support/problems';
import { SseClient } from '../support/sse';
import { EventsService } from '../../src/events';
import { until } from '../support/until';

/** The change feed: GET /events (with long polls), GET /events/stream, on two instances. */
const ENV = { EVENTS_POLL_MS: '100', EVENTS_HEARTBEAT_MS: '300' };
let a: TestApp;
let b: TestApp;
let portA: number;
let user: TestUser;

interface Ev {
  id: string;
  type: string;
  resource: string;
  collection?: string;
  key: string;
  branch: string;
  actor: { kind: string; id: string };
  data?: Record<string, unknown>;
}

/** The instance's feed hub: how many streams and long polls wait on it. */
function hubOf(t: TestApp): { waiting: number } {
  const service: unknown = t.app.get(EventsService);
  return (service as { hub: { waiting: number } }).hub;
}

beforeAll(async () => {
  const shared = { ...ENV, MONGODB_DB_NAME: uniqueDbName(__filename) };
  a = await createTestApp(__filename, shared);
  b = await createTestApp(__filename, shared);
  await a.app.listen(0, '127.0.0.1');
  portA = ((a.app.getHttpServer() as Server).address() as AddressInfo).port;
  user = await createUser(a);
});
afterAll(async () => {
  await a?.close();
  await b?.close();
});

const feed = async (
  t: TestApp,
  key: string,
  query = '',
  branch = '',
): Promise<{ events: Ev[]; next: string }> =>
  (
    await t
      .http()
      .get(`/events${query ? `?${query}` : ''}`)
      .set('X-Api-Key', key)
      .set('X-Branch', branch)
      .expect(200)
  ).body as { events: Ev[]; next: string };

const latest = async (key: string, branch = ''): Promise<number> => {
  let after = '0';
  for (;;) {
    const page = await feed(a, key, `after=${after}&limit=500`, branch);
    if (page.events.length === 0) return Number(after);
    after = page.next;
  }
};

describe('GET /events', () => {
  it('records creates, updates and deletes of items in order, with the item as written', async () => {
    const start = await latest(user.apiKey);
    await a
      .http()
      .post('/data/orders')
      .set('X-Api-Key', user.apiKey)
      .send({ item: { _id: 'o1', n: 1 } })
      .expect(200);
    await b
      .http()
      .put('/data/orders/_id/o1')
      .set('X-Api-Key', user.apiKey)
      .send({ values: { n: 2 } })
      .expect(200);
    await a.http().delete('/data/orders/_id/o1').set('X-Api-Key', user.apiKey).expect(204);

    const page = await feed(a, user.apiKey, `after=${start}`);
    expect(page.events.map((e) => [e.resource, e.type, e.key])).toEqual([
      ['collection', 'created', 'orders'],
      ['item', 'created', 'o1'],
      ['item', 'updated', 'o1'],
      ['item', 'deleted', 'o1'],
    ]);
    const ids = page.events.map((e) => Number(e.id));
    expect(ids).toEqual([...ids].sort((x, y) => x - y));
    expect(new Set(ids).size).toBe(ids.length);
    expect(page.events[1]?.data).toMatchObject({ _id: 'o1', n: 1, userId: user.subject });
    expect(page.events[2]?.data).toMatchObject({ _id: 'o1', n: 2 });
    expect(page.events[3]?.data).toBeUndefined();
    expect(page.events[1]).toMatchObject({
      collection: 'orders',
      branch: '',
      actor: { kind: 'root', id: user.subject },
    });
    expect(page.next).toBe(page.events.at(-1)?.id);
  });

  it('records one event per item of bulk creates, multi updates and multi deletes, and drops', async () => {
    const start = await latest(user.apiKey);
    await a
      .http()
      .post('/data/many/bulk')
      .set('X-Api-Key', user.apiKey)
      .send({
        items: [
          { _id: 'm1', s: 'x' },
          { _id: 'm2', s: 'x' },
          { _id: 'm3', s: 'y' },
        ],
      })
      .expect(200);
    await a
      .http()
      .put('/data/many')
      .set('X-Api-Key', user.apiKey)
      .send({ filter: { s: 'x' }, values: { s: 'z' }, multi: true })
      .expect(200, { matched: 2, modified: 2 });
    await a
      .http()
      .delete('/data/many')
      .set('X-Api-Key', user.apiKey)
      .send({ filter: { s: 'z' }, multi: true })
      .expect(200, { deleted: 2 });
    await a.http().delete('/data/many').set('X-Api-Key', user.apiKey).expect(204);
    const events = (await feed(a, user.apiKey, `after=${start}&collection=many`)).events;
    const of = (type: string) =>
      events
        .filter((e) => e.resource === 'item' && e.type === type)
        .map((e) => e.key)
        .sort();
    expect(of('created')).toEqual(['m1', 'm2', 'm3']);
    expect(of('updated')).toEqual(['m1', 'm2']);
    expect(of('deleted')).toEqual(['m1', 'm2']);
    expect(events.at(-1)).toMatchObject({ resource: 'collection', type: 'deleted', key: 'many' });
  });

  it('numbers the events of concurrent writes through two instances 1, 2, 3, … with no gap and no repeat', async () => {
    const writer = await createUser(a);
    const writes = Array.from({ length: 60 }, (_, n) =>
      (n % 2 === 0 ? a : b)
        .http()
        .post('/data/racing')
        .set('X-Api-Key', writer.apiKey)
        .send({ item: { n } })
        .expect(200),
    );
    const ids = (await Promise.all(writes)).map((res) => (res.body as { _id: string })._id);
    const events = (await feed(a, writer.apiKey, 'limit=500')).events;
    // The collection's creation, then one event per item.
    expect(events.map((e) => Number(e.id))).toEqual(events.map((_, i) => i + 1));
    const created = events.filter((e) => e.resource === 'item').map((e) => e.key);
    expect(created.sort()).toEqual([...ids].sort());
  });

  it('filters by collection, type and resource, and pages with next', async () => {
    const start = await latest(user.apiKey);
    for (let i = 0; i < 5; i += 1)
      await a
        .http()
        .post('/data/paged')
        .set('X-Api-Key', user.apiKey)
        .send({ item: { i } })
        .expect(200);
    const created = await feed(
      a,
      user.apiKey,
      `after=${start}&type=created&resource=item&collection=paged`,
    );
    expect(created.events).toHaveLength(5);
    const first = await feed(a, user.apiKey, `after=${start}&limit=2&resource=item`);
    expect(first.events).toHaveLength(2);
    const second = await feed(a, user.apiKey, `after=${first.next}&limit=2&resource=item`);
    expect(Number(second.events[0]?.id)).toBeGreaterThan(Number(first.next));
  });

  it('keeps tenants and branches apart', async () => {
    const other = await createUser(a);
    await a
      .http()
      .post('/data/secret')
      .set('X-Api-Key', other.apiKey)
      .send({ item: { s: 1 } })
      .expect(200);
    await a
      .http()
      .post('/data/staged')
      .set('X-Api-Key', user.apiKey)
      .set('X-Branch', 'staging')
      .send({ item: { s: 1 } })
      .expect(200);
    const mine = await feed(a, user.apiKey, 'limit=500');
    expect(mine.events.some((e) => e.collection === 'secret' || e.collection === 'staged')).toBe(
      false,
    );
    const staging = await feed(a, user.apiKey, 'limit=500', 'staging');
    expect(staging.events.map((e) => e.collection)).toEqual(['staged', 'staged']);
    expect(staging.events.every((e) => e.branch === 'staging')).toBe(true);
  });

  it('wakes a long poll within a second of a change made through another instance', async () => {
    const start = await latest(user.apiKey);
    const hub = hubOf(a);
    const waitingBefore = hub.waiting;
    let answeredAt = 0;
    const polled = a
      .http()
      .get(`/events?after=${start}&wait=10`)
      .set('X-Api-Key', user.apiKey)
      .then((res) => {
        answeredAt = Date.now();
        return res;
      });
    // The change is made once the poll waits on instance a, so it is a wake that answers it.
    await until('the long poll to wait', () => hub.waiting > waitingBefore);
    await b
      .http()
      .post('/data/poll')
      .set('X-Api-Key', user.apiKey)
      .send({ item: { _id: 'p1' } })
      .expect(200);
    const writtenAt = Date.now();
    const res = await polled;
    expect(res.status).toBe(200);
    expect((res.body as { events: Ev[] }).events.map((e) => e.key)).toContain('poll');
    // Another instance's change is found by the poll of the newest number (EVENTS_POLL_MS, 100 ms
    // here), then read: well within a second.
    expect(answeredAt - writtenAt).toBeLessThan(1000);
  });

  it('answers an empty page when the wait ends without events', async () => {
    const start = await latest(user.apiKey);
    const res = await feed(a, user.apiKey, `after=${start}&wait=1`);
    expect(res).toEqual({ events: [], next: String(start) });
  });

  it('refuses bad cursors, limits and waits, the operator key and no key', async () => {
    for (const query of [
      'after=-1',
      'after=x',
      'limit=0',
      'limit=501',
      'wait=31',
      'type=moved',
      'resource=team',
      'collection=a$b',
    ])
      expectProblem(
        await a.http().get(`/events?${query}`).set('X-Api-Key', user.apiKey),
        400,
        'VALIDATION_FAILED',
      );
    expectProblem(await a.http().get('/events'), 401, 'UNAUTHENTICATED');
    expectProblem(await a.http().get('/events').set('X-Api-Key', TEST_ADMIN_KEY), 403, 'FORBIDDEN');
    expectInvalid(
      await a.http().get('/events/stream').set('X-Api-Key', user.apiKey).set('Last-Event-ID', 'x'),
      'Last-Event-ID',
    );
  });
});

describe('sub keys', () => {
  let owner: TestUser;
  let subs: TestSubProfile[];

  beforeAll(async () => {
    owner = await createUser(a);
    subs = [
      await createSubKey(a, owner, { accountId: 'acct-a' }),
      await createSubKey(a, owner, { accountId: 'acct-b' }),
    ];
  });

  it('see only the events of the items they own, in pages and in their stream', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(
          fc.record({
            by: fc.nat(2),
            owner: fc.nat(1),
            op: fc.constantFrom('create', 'update', 'delete'),
          }),
          { minLength: 3, maxLength: 12 },
        ),
        async (writes) => {
          const start = await latest(owner.apiKey);
          const created: { id: string; owner: string }[] = [];
          const ownerOfItem = new Map<string, string>();
          for (const [i, w] of writes.entries()) {
            const key = w.by === 2 ? owner.apiKey : subs[w.by]!.apiKey;
            const ownerValue = w.by === 2 ? subs[w.owner]!.accountId : subs[w.by]!.accountId;
            const target = created.find((c) => c.owner === ownerValue);
            if (w.op === 'create' || !target) {
              const id = `x${start}-${i}`;
              await a
                .http()
                .post('/data/shared')
                .set('X-Api-Key', key)
                .send({ item: { _id: id, userId: ownerValue } })
                .expect(200);
              created.push({ id, owner: ownerValue });
              ownerOfItem.set(id, ownerValue);
            } else if (w.op === 'update') {
              await a
                .http()
                .put(`/data/shared/_id/${target.id}`)
                .set('X-Api-Key', key)
                .send({ values: { v: i } })
                .expect(200);
            } else {
              await a
                .http()
                .delete(`/data/shared/_id/${target.id}`)
                .set('X-Api-Key', key)
                .expect(204);
              created.splice(created.indexOf(target), 1);
            }
          }
          const all = (await feed(a, owner.apiKey, `after=${start}&limit=500&resource=item`))
            .events;
          expect(all.length).toBeGreaterThanOrEqual(writes.length);
          for (const sub of subs) {
            const seen = (await feed(a, sub.apiKey, `after=${start}&limit=500&resource=item`))
              .events;
            // Exactly the events of the items it owns — creates, updates and deletes — in order.
            const owned = all.filter((e) => ownerOfItem.get(e.key) === sub.accountId);
            expect(seen.map((e) => e.id)).toEqual(owned.map((e) => e.id));
            expect(seen.every((e) => e.data === undefined || e.data.userId === sub.accountId)).toBe(
              true,
            );
            // The sub key's stream holds the same events, and nothing else.
            const stream = await SseClient.open(
              portA,
              `/events/stream?after=${start}&resource=item`,
              { 'X-Api-Key': sub.apiKey },
            );
            try {
              const streamed = owned.length === 0 ? [] : await stream.waitFor(owned.length);
              await new Promise((r) => setTimeout(r, 150));
              expect(stream.events.map((e) => e.id)).toEqual(owned.map((e) => e.id));
              expect(
                streamed.every(
                  (e) => ownerOfItem.get((JSON.parse(e.data) as Ev).key) === sub.accountId,
                ),
              ).toBe(true);
            } finally {
              stream.close();
            }
          }
        },
      ),
      { numRuns: 8, seed: 1515 },
    );
  });

  it('never see projects', async () => {
    await a
      .http()
      .post('/project')
      .set('X-Api-Key', owner.apiKey)
      .send({ name: 'hidden' })
      .expect(200);
    const seen = (await feed(a, subs[0]!.apiKey, 'limit=500')).events;
    expect(seen.some((e) => e.resource === 'project')).toBe(false);
  });
});

describe('GET /events/stream', () => {
  const headers = () => ({ 'X-Api-Key': user.apiKey });

  it('streams new events, resumes after a disconnect with exactly the missed ones, and sends heartbeats', async () => {
    const first = await SseClient.open(portA, '/events/stream?collection=live', headers());
    expect(first.status).toBe(200);
    expect(first.headers['content-type']).toMatch(/^text\/event-stream/);
    await a
      .http()
      .post('/data/live')
      .set('X-Api-Key', user.apiKey)
      .send({ item: { _id: 'l1' } })
      .expect(200);
    const got = await first.waitFor(2);
    expect(got.map((e) => JSON.parse(e.data).key)).toEqual(['live', 'l1']);
    const lastId = got.at(-1)!.id!;
    first.close();

    for (const id of ['l2', 'l3', 'l4'])
      await b
        .http()
        .post('/data/live')
        .set('X-Api-Key', user.apiKey)
        .send({ item: { _id: id } })
        .expect(200);
    const resumed = await SseClient.open(portA, '/events/stream?collection=live', {
      ...headers(),
      'Last-Event-ID': lastId,
    });
    const missed = await resumed.waitFor(3);
    expect(missed.map((e) => JSON.parse(e.data).key)).toEqual(['l2', 'l3', 'l4']);
    expect(missed.map((e) => e.event)).toEqual(['created', 'created', 'created']);
    expect(missed.map((e) => Number(e.id))).toEqual(
      missed.map((e) => Number(JSON.parse(e.data).id)),
    );
    // Heartbeats (EVENTS_HEARTBEAT_MS, 300 ms here) keep the stream alive while nothing happens.
    await until('a heartbeat', () => resumed.comments > 0);
    expect(resumed.events).toHaveLength(3);
    resumed.close();
  });

  it('delivers a change made through another instance within 2 s', async () => {
    const stream = await SseClient.open(portA, '/events/stream?collection=cross', headers());
    const began = Date.now();
    await b
      .http()
      .post('/data/cross')
      .set('X-Api-Key', user.apiKey)
      .send({ item: { _id: 'c1' } })
      .expect(200);
    await stream.waitFor(2, 2000);
    expect(Date.now() - began).toBeLessThan(2000);
    stream.close();
  });

  it('frees what a closed stream held', async () => {
    const hub = hubOf(a);
    // Streams closed by earlier tests are gone once the server has seen their sockets close.
    await until('earlier streams to be released', () => hub.waiting === 0);
    const stream = await SseClient.open(portA, '/events/stream', headers());
    await until('the stream to follow its namespace', () => hub.waiting === 1);
    stream.close();
    await until('the closed stream to be released', () => hub.waiting === 0);
    expect(hub.waiting).toBe(0);
  });
});

describe('retention', () => {
  it('drops events older than EVENTS_RETENTION_MS, keeps the numbering, and answers old cursors 410', async () => {
    const short = await createTestApp(__filename, { ...ENV, EVENTS_RETENTION_MS: '1000' });
    try {
      const owner = await createUser(short);
      for (const id of ['r1', 'r2', 'r3'])
        await short
          .http()
          .post('/data/kept')
          .set('X-Api-Key', owner.apiKey)
          .send({ item: { _id: id } })
          .expect(200);
      const before = await feed(short, owner.apiKey, 'limit=500');
      expect(before.events.map((e) => e.id)).toEqual(['1', '2', '3', '4']);
      await new Promise((r) => setTimeout(r, 1200));
      const { EventsService } = await import('../../src/events');
      await short.app.get(EventsService).sweep();

      expectProblem(
        await short.http().get('/events?after=1').set('X-Api-Key', owner.apiKey),
        410,
        'CURSOR_EXPIRED',
      );
      // The newest event stays: the numbering goes on from it.
      expect((await feed(short, owner.apiKey, 'after=0')).events.map((e) => e.id)).toEqual(['4']);
      await feed(short, owner.apiKey, 'after=3');
      await short
        .http()
        .post('/data/kept')
        .set('X-Api-Key', owner.apiKey)
        .send({ item: { _id: 'r4' } })
        .expect(200);
      const after = await feed(short, owner.apiKey, 'after=4');
      expect(after.events.map((e) => [e.id, e.key])).toEqual([['5', 'r4']]);
    } finally {
      await short.close();
    }
  });
});
