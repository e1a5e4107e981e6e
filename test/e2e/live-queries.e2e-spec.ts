import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createTestApp, TEST_ADMIN_KEY, uniqueDbName, type TestApp } from '../support/app';
import {
  addTeamMember,
  createApiKey,
  createSubKey,
  createTeam,
  createUser,
  type TestUser,
} from '../support/factories';
import { holdClock, moveClock } from '../support/held-clock';
import { expectInvalid, expectProblem } from '../support/problems';
import { SseClient, type FeedEventData as Ev, type SseEvent } from '../support/sse';
import { ExpirySweep } from '../../src/data/rules/expiry/expiry-sweep';
import { EventsService } from '../../src/events';
import { until } from '../support/until';

/**
 * Live queries: GET /events and GET /events/stream with an item filter (docs/events.md, "Live
 * queries"), on two instances sharing one database.
 */
const RIGHTS_CHECK_MS = 300;
const ENV = {
  EVENTS_POLL_MS: '100',
  EVENTS_HEARTBEAT_MS: '300',
  FILTER_MAX_IN_VALUES: '3',
  STREAM_RIGHTS_CHECK_MS: String(RIGHTS_CHECK_MS),
};
let a: TestApp;
let b: TestApp;
let portA: number;
let portB: number;
let user: TestUser;

const portOf = (t: TestApp): number =>
  ((t.app.getHttpServer() as Server).address() as AddressInfo).port;

beforeAll(async () => {
  const shared = { ...ENV, MONGODB_DB_NAME: uniqueDbName(__filename) };
  a = await createTestApp(__filename, shared);
  b = await createTestApp(__filename, shared);
  await a.app.listen(0, '127.0.0.1');
  await b.app.listen(0, '127.0.0.1');
  portA = portOf(a);
  portB = portOf(b);
  user = await createUser(a);
});
afterAll(async () => {
  await a?.close();
  await b?.close();
});

const events = (list: SseEvent[] | SseClient): Ev[] =>
  (Array.isArray(list) ? list : list.events).map((e) => JSON.parse(e.data) as Ev);
const summary = (list: Ev[]): string[] =>
  list.map((e) => `${e.type} ${e.resource === 'collection' ? 'collection' : e.key}`);

async function write(
  t: TestApp,
  key: string,
  method: 'post' | 'put' | 'delete',
  path: string,
  body?: unknown,
): Promise<void> {
  const req = t.http()[method](path).set('X-Api-Key', key);
  await (body === undefined ? req : req.send(body as object)).expect(
    method === 'delete' ? 204 : 200,
  );
}

/** The position of the feed a list of `collection` answers (Feed-Position). */
async function position(t: TestApp, key: string, collection: string): Promise<string> {
  const res = await t.http().get(`/data/${collection}`).set('X-Api-Key', key);
  expect([200, 204]).toContain(res.status);
  const header = res.headers['feed-position'];
  expect(header).toMatch(/^\d+$/);
  return header as string;
}

describe('live query parameters', () => {
  it.each([
    ['filter[status]=open', 'collection'],
    ['collection=c&status[eq]=open', 'status[eq]'],
    ['collection=c&filter[status][regex]=o', 'filter[status][regex]'],
    ['collection=c&filter[status][in]=a,b,c,d', 'filter[status][in]'],
    ['collection=c&filter[$where]=1', '$where'],
    ['collection=c&fields=a,-b', 'fields'],
    ['type=entered', 'type'],
    ['collection=c&filter[s]=a&resource=project', 'resource'],
  ])('answers 400 to %s, naming %s', async (query, field) => {
    for (const path of ['/events', '/events/stream'])
      expectInvalid(await a.http().get(`${path}?${query}`).set('X-Api-Key', user.apiKey), field);
  });
});

describe('a live query', () => {
  /** The changes every test below makes, through `t`, in a collection of its own. */
  async function lifecycle(t: TestApp, collection: string): Promise<void> {
    const key = user.apiKey;
    const path = `/data/${collection}`;
    await write(t, key, 'post', path, { item: { _id: 'o1', status: 'open', total: 1 } });
    await write(t, key, 'post', path, { item: { _id: 'c1', status: 'closed', total: 1 } });
    await write(t, key, 'put', `${path}/_id/c1`, { values: { status: 'open' } });
    await write(t, key, 'put', `${path}/_id/o1`, { values: { total: 2 } });
    await write(t, key, 'put', `${path}/_id/o1`, { values: { status: 'closed' } });
    await write(t, key, 'put', `${path}/_id/o1`, { values: { total: 3 } });
    await write(t, key, 'delete', `${path}/_id/c1`);
    await write(t, key, 'delete', `${path}/_id/o1`);
  }

  const EXPECTED = [
    'created collection',
    'created o1',
    'entered c1',
    'updated o1',
    'left o1',
    'deleted c1',
  ];

  it('streams created, entered, updated, left and deleted, with the item projected', async () => {
    const from = await position(a, user.apiKey, 'lq1');
    const stream = await SseClient.open(
      portA,
      `/events/stream?after=${from}&collection=lq1&filter[status]=open&fields=status`,
      { 'X-Api-Key': user.apiKey },
    );
    try {
      await lifecycle(a, 'lq1');
      const got = events(await stream.waitFor(EXPECTED.length));
      expect(summary(got)).toEqual(EXPECTED);
      expect(got[1]?.data).toEqual({ _id: 'o1', status: 'open' });
      expect(got[4]?.data).toEqual({ _id: 'o1', status: 'closed' });
      expect(got[5]?.data).toBeUndefined();
      expect(stream.events.map((e) => e.event)).toEqual(EXPECTED.map((s) => s.split(' ')[0]));
    } finally {
      stream.close();
    }
  });

  it('pages the same events, and moves next past events it does not send', async () => {
    const from = await position(a, user.apiKey, 'lq2');
    await lifecycle(a, 'lq2');
    const page = await a
      .http()
      .get(`/events?after=${from}&collection=lq2&filter[status]=open`)
      .set('X-Api-Key', user.apiKey)
      .expect(200);
    const body = page.body as { events: Ev[]; next: string };
    expect(summary(body.events)).toEqual(EXPECTED);
    const last = await a
      .http()
      .get(`/events?after=${from}&collection=lq2&type=left&filter[status]=open`)
      .set('X-Api-Key', user.apiKey)
      .expect(200);
    expect(summary((last.body as { events: Ev[] }).events)).toEqual(['left o1']);
    // The last change (the deletion of o1, closed by then) is read but not sent.
    const latest = await a
      .http()
      .get(`/events?after=${from}&limit=500`)
      .set('X-Api-Key', user.apiKey);
    expect(body.next).toBe((latest.body as { next: string }).next);
  });

  it('sees changes made through another instance within a second', async () => {
    const from = await position(a, user.apiKey, 'lq3');
    const stream = await SseClient.open(
      portA,
      `/events/stream?after=${from}&collection=lq3&filter[total][gte]=2`,
      { 'X-Api-Key': user.apiKey },
    );
    try {
      await write(b, user.apiKey, 'post', '/data/lq3', { item: { _id: 'x', total: 1 } });
      await stream.waitFor(1);
      const started = Date.now();
      await write(b, user.apiKey, 'put', '/data/lq3/_id/x', { values: { total: 5 } });
      await stream.waitFor(2, 1000);
      expect(Date.now() - started).toBeLessThan(1000);
      expect(summary(events(stream))).toEqual(['created collection', 'entered x']);
    } finally {
      stream.close();
    }
  });

  it('keeps a sub key to its own items: an item given to another owner is left, without the item', async () => {
    const owner = await createSubKey(a, user);
    const other = await createSubKey(a, user);
    const from = await position(a, user.apiKey, 'lq4');
    const open = (key: string, port: number) =>
      SseClient.open(port, `/events/stream?after=${from}&collection=lq4&filter[status]=open`, {
        'X-Api-Key': key,
      });
    const mine = await open(owner.apiKey, portA);
    const theirs = await open(other.apiKey, portB);
    try {
      await write(a, owner.apiKey, 'post', '/data/lq4', { item: { _id: 'i', status: 'open' } });
      await write(a, user.apiKey, 'put', '/data/lq4/_id/i', {
        values: { userId: other.accountId },
      });
      await write(b, other.apiKey, 'put', '/data/lq4/_id/i', { values: { n: 1 } });
      expect(summary(events(await mine.waitFor(3)))).toEqual([
        'created collection',
        'created i',
        'left i',
      ]);
      expect(events(mine)[2]?.data).toBeUndefined();
      expect(summary(events(await theirs.waitFor(3)))).toEqual([
        'created collection',
        'entered i',
        'updated i',
      ]);
    } finally {
      mine.close();
      theirs.close();
    }
  });

  it('resumes with Last-Event-ID on another instance without losing or repeating an event', async () => {
    const from = await position(a, user.apiKey, 'lq5');
    const query = `collection=lq5&filter[status]=open`;
    const first = await SseClient.open(portA, `/events/stream?after=${from}&${query}`, {
      'X-Api-Key': user.apiKey,
    });
    await lifecycle(a, 'lq5');
    await first.waitFor(3);
    first.close();
    const lastId = first.events.slice(0, 3).at(-1)?.id as string;
    const second = await SseClient.open(portB, `/events/stream?${query}`, {
      'X-Api-Key': user.apiKey,
      'Last-Event-ID': lastId,
    });
    try {
      await second.waitFor(EXPECTED.length - 3);
      expect(summary([...events(first).slice(0, 3), ...events(second)])).toEqual(EXPECTED);
    } finally {
      second.close();
    }
  });

  it('sends deleted when the expiry sweep removes a matching item', async () => {
    const key = user.apiKey;
    const from = await position(a, key, 'lq6');
    const stream = await SseClient.open(
      portA,
      `/events/stream?after=${from}&collection=lq6&filter[status]=open`,
      { 'X-Api-Key': key },
    );
    try {
      await write(a, key, 'post', '/data/lq6', { item: { _id: 'kept', status: 'open' } });
      await write(a, key, 'put', '/data/lq6/expiry', { field: 'endsAt', afterSeconds: 1 });
      // Due as soon as stored: their end is long past.
      const endsAt = new Date(Date.now() - 3_600_000).toISOString();
      await write(a, key, 'post', '/data/lq6', { item: { _id: 'e1', status: 'open', endsAt } });
      await write(a, key, 'post', '/data/lq6', { item: { _id: 'e2', status: 'done', endsAt } });
      await a.app.get(ExpirySweep).runNow();
      const got = events(await stream.waitFor(5));
      expect(summary(got)).toEqual([
        'created collection',
        'created kept',
        'updated collection',
        'created e1',
        'deleted e1',
      ]);
      expect(got[4]).toMatchObject({ actor: { kind: 'system', id: 'expiry' } });
    } finally {
      stream.close();
    }
  });

  it('judges the items of a multi-item update and of an import replacement by what they were', async () => {
    const key = user.apiKey;
    for (const [id, status] of [
      ['m1', 'open'],
      ['m2', 'closed'],
      ['m3', 'closed'],
    ])
      await write(a, key, 'post', '/data/multi', { item: { _id: id, status, kind: 'm' } });
    const after = await position(a, key, 'multi');
    const change = { values: { status: 'open' }, multi: true, filter: { kind: 'm' } };
    await write(a, key, 'put', '/data/multi', change);
    await write(a, key, 'put', '/data/multi', { ...change, values: { status: 'closed' } });
    const line = {
      type: 'item',
      collection: 'multi',
      item: { _id: 'm2', status: 'open', kind: 'm' },
    };
    const imported = await a
      .http()
      .post('/import?mode=upsert')
      .set('X-Api-Key', key)
      .set('Content-Type', 'application/x-ndjson')
      .send(JSON.stringify(line));
    expect(imported.status).toBe(200);
    expect(imported.text).toContain('"status":200');
    const page = await a
      .http()
      .get('/events')
      .query({ collection: 'multi', 'filter[status]': 'open', after })
      .set('X-Api-Key', key)
      .expect(200);
    expect(summary(page.body.events as Ev[])).toEqual([
      'updated m1',
      'entered m2',
      'entered m3',
      'left m1',
      'left m2',
      'left m3',
      'entered m2',
    ]);
  });

  it('holds a long poll through changes that are not its own, and answers the first that is', async () => {
    const key = user.apiKey;
    const from = await position(a, key, 'lq7');
    const service: unknown = a.app.get(EventsService);
    const { hub } = service as { hub: { waiting: number } };
    const base = hub.waiting;
    const polled = a
      .http()
      .get(`/events?after=${from}&collection=lq7&resource=item&filter[status]=open&wait=20`)
      .set('X-Api-Key', key)
      .then((res) => res);
    await until('the long poll to wait', () => hub.waiting > base);
    await write(a, key, 'post', '/data/lq7', { item: { _id: 'no', status: 'done' } });
    // Woken by that change, it read it, judged it not its own, and waits again.
    await until('the long poll to wait again', () => hub.waiting > base);
    await write(a, key, 'post', '/data/lq7', { item: { _id: 'yes', status: 'open' } });
    const body = (await polled).body as { events: Ev[]; next: string };
    expect(summary(body.events)).toEqual(['created yes']);
    expect(body.next).toBe(body.events[0]?.id);
  });
});

/**
 * A stream or long poll ends when its principal loses its rights (docs/security.md): opened on
 * instance b, the loss caused through instance a, so only the database can tell b. Each test
 * writes an event the reader would see right after the loss: it must never arrive.
 */
describe('rights for the life of a stream', () => {
  /** The documented bound (STREAM_RIGHTS_CHECK_MS) with room for a check's own queries. */
  const BOUND_MS = RIGHTS_CHECK_MS + 1500;

  const streamOf = (key: string, query: string, headers: Record<string, string> = {}) =>
    SseClient.open(portB, `/events/stream?${query}`, { 'X-Api-Key': key, ...headers });

  /** Ends with a last `end` event naming `reason`, within the bound after `lostAt`. */
  async function expectEnded(stream: SseClient, reason: string, lostAt: number): Promise<void> {
    await until(`the stream to end (${reason})`, () => stream.ended, BOUND_MS + 5000);
    const endedAfter = performance.now() - lostAt;
    const last = stream.events.at(-1);
    expect(last?.event).toBe('end');
    expect((JSON.parse(last?.data ?? '{}') as { reason: string }).reason).toBe(reason);
    expect(endedAfter).toBeLessThan(BOUND_MS);
  }

  /** The item keys a stream was sent (its `end` event aside). */
  const keysSent = (stream: SseClient): string[] =>
    events(stream.events.filter((e) => e.event !== 'end'))
      .filter((e) => e.resource === 'item')
      .map((e) => e.key);

  it('ends the streams and the long poll of a revoked key, and sends them nothing written after', async () => {
    const extra = await createApiKey(a, user);
    const from = await position(a, user.apiKey, 'rights1');
    const plain = await streamOf(extra.apiKey, `after=${from}&collection=rights1`);
    const live = await streamOf(extra.apiKey, `after=${from}&collection=rights1&filter[n][gte]=0`);
    const slots = b.app.get(EventsService).slots;
    const base = slots.open;
    const poll = b
      .http()
      .get(`/events?after=${from}&collection=rights1&resource=item&wait=20`)
      .set('X-Api-Key', extra.apiKey)
      .then((res) => res);
    try {
      await until('the long poll to wait', () => slots.open === base + 1);
      await write(a, user.apiKey, 'post', '/data/rights1', { item: { _id: 'before', n: 1 } });
      await plain.waitFor(2);
      await live.waitFor(2);
      expect((await poll).status).toBe(200);
      const poll2 = b
        .http()
        .get(`/events?after=${from}&collection=rights1&resource=item&filter[n][gte]=5&wait=20`)
        .set('X-Api-Key', extra.apiKey)
        .then((res) => res);
      await until('the second long poll to wait', () => slots.open === base + 1);
      await write(a, user.apiKey, 'delete', `/api-keys/${extra.key.id}`);
      const lostAt = performance.now();
      await write(a, user.apiKey, 'post', '/data/rights1', { item: { _id: 'after', n: 9 } });
      await expectEnded(plain, 'KEY_REVOKED', lostAt);
      await expectEnded(live, 'KEY_REVOKED', lostAt);
      expect(keysSent(plain)).toEqual(['before']);
      expect(keysSent(live)).toEqual(['before']);
      expectProblem(await poll2, 401, 'UNAUTHENTICATED');
    } finally {
      plain.close();
      live.close();
    }
  });

  it('ends the stream of a key at its expiry, and sends it nothing written after', async () => {
    holdClock();
    try {
      const expiring = await createApiKey(a, user, {
        expiresAt: new Date(Date.now() + 60_000).toISOString(),
      });
      const from = await position(a, user.apiKey, 'rights2');
      const stream = await streamOf(expiring.apiKey, `after=${from}&collection=rights2`);
      try {
        await write(a, user.apiKey, 'post', '/data/rights2', { item: { _id: 'before' } });
        await stream.waitFor(2);
        moveClock(60_000);
        const lostAt = performance.now();
        await write(a, user.apiKey, 'post', '/data/rights2', { item: { _id: 'after' } });
        await expectEnded(stream, 'KEY_EXPIRED', lostAt);
        expect(keysSent(stream)).toEqual(['before']);
      } finally {
        stream.close();
      }
    } finally {
      jest.useRealTimers();
    }
  });

  it("ends a removed member's X-Team stream, and sends it nothing written after", async () => {
    const team = await createTeam(a);
    const member = await createUser(a);
    await addTeamMember(a, team, member);
    const from = await position(a, team.apiKey, 'rights3');
    const stream = await streamOf(member.apiKey, `after=${from}&collection=rights3`, {
      'X-Team': team.teamId,
    });
    try {
      await write(a, team.apiKey, 'post', '/data/rights3', { item: { _id: 'before' } });
      await stream.waitFor(2);
      await a
        .http()
        .delete(`/admin/teams/${team.teamId}/members/${encodeURIComponent(member.subject)}`)
        .set('X-Api-Key', TEST_ADMIN_KEY)
        .expect(204);
      const lostAt = performance.now();
      await write(a, team.apiKey, 'post', '/data/rights3', { item: { _id: 'after' } });
      await expectEnded(stream, 'TEAM_MEMBERSHIP_ENDED', lostAt);
      expect(keysSent(stream)).toEqual(['before']);
    } finally {
      stream.close();
    }
  });

  it('ends the stream of a deleted sub profile, and sends it nothing written after', async () => {
    const sub = await createSubKey(a, user);
    const from = await position(a, user.apiKey, 'rights4');
    const stream = await streamOf(sub.apiKey, `after=${from}&collection=rights4`);
    try {
      // The root writes items the sub profile owns: they are the sub key's to see.
      const item = (id: string) => ({ item: { _id: id, userId: sub.accountId } });
      await write(a, user.apiKey, 'post', '/data/rights4', item('before'));
      await until('the sub key to see its item', () => keysSent(stream).length === 1);
      await write(a, user.apiKey, 'delete', `/profile/${sub.accountId}`);
      const lostAt = performance.now();
      await write(a, user.apiKey, 'post', '/data/rights4', item('after'));
      await expectEnded(stream, 'KEY_REVOKED', lostAt);
      expect(keysSent(stream)).toEqual(['before']);
    } finally {
      stream.close();
    }
  });

  it('ends the stream of an erased user, and sends it nothing written after', async () => {
    const erased = await createUser(a);
    const from = await position(a, erased.apiKey, 'rights5');
    const stream = await streamOf(erased.apiKey, `after=${from}`);
    try {
      await write(a, erased.apiKey, 'post', '/data/rights5', { item: { _id: 'before' } });
      await stream.waitFor(2);
      await a
        .http()
        .delete(`/admin/users/${encodeURIComponent(erased.subject)}`)
        .set('X-Api-Key', TEST_ADMIN_KEY)
        .expect(202);
      const lostAt = performance.now();
      await expectEnded(stream, 'KEY_REVOKED', lostAt);
      // The erasure's own changes (its collection dropped) came after: none was sent.
      expect(summary(events(stream.events.filter((e) => e.event !== 'end')))).toEqual([
        'created collection',
        'created before',
      ]);
    } finally {
      stream.close();
    }
  });
});
