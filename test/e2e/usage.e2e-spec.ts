import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { MongoClient, type Document } from 'mongodb';
import {
  TEST_ADMIN_KEY,
  testDatabaseUri,
  uniqueDbName,
  type TestApp,
  createTestApp,
} from '../support/app';
import {
  createApiKey,
  createSubKey,
  createTeam,
  createUser,
  type TestUser,
} from '../support/factories';
import { anonymous, as, asOperator } from '../support/http';
import { exportAs, importAs, ndjsonText, parseLines } from '../support/ndjson';
import {
  startProxiedInstances,
  type ProxiedInstances,
  type ServiceProcess,
} from '../support/service-process';
import { until } from '../support/until';
import type { WireProxy } from '../support/wire-proxy';
import { UsageFlusher, UsageSweeper } from '../../src/usage';

/**
 * Usage metering: what is counted per tenant and UTC day, GET /me/usage and GET /admin/usage,
 * the retention sweep (on the app in this process, flushed when the test says); then two real
 * instances on one database, a flush whose reply is lost, a SIGTERM and a SIGKILL at a flush
 * the test holds.
 */
const DAY_MS = 86_400_000;
const day = (offset = 0): string =>
  new Date(Date.now() + offset * DAY_MS).toISOString().slice(0, 10);

interface Counts {
  read: number;
  write: number;
  stream: number;
  streamMinutes: number;
  export: number;
  import: number;
  bytesIn: number;
  bytesOut: number;
  webhookEvents: number;
}

describe('usage metering (one instance)', () => {
  let t: TestApp;
  const flush = () => t.app.get(UsageFlusher).flush();

  beforeAll(async () => {
    // Flushed only when a test says so (and at close).
    t = await createTestApp(__filename, {
      USAGE_ENABLED: 'true',
      USAGE_FLUSH_MS: '3600000',
      USAGE_RETENTION_DAYS: '30',
      // Webhooks to a receiver in this process, delivered and retried soon.
      EVENTS_POLL_MS: '50',
      WEBHOOK_ALLOW_PRIVATE: 'true',
      WEBHOOK_RETRY_BASE_MS: '100',
    });
  });
  afterAll(async () => {
    // What is left is written now, not by the close after the database is dropped.
    if (t) await flush();
    await t?.close();
  });

  async function usageOf(key: string | TestUser, query: Record<string, string> = {}) {
    const res = await as(t, key).get('/me/usage', { query }).expect(200);
    return res.body as {
      from: string;
      to: string;
      days: (Counts & { day: string })[];
      total: Counts;
    };
  }

  it('counts each request a route handles in its class, with its bytes and stream time, for its tenant', async () => {
    const user = await createUser(t);
    const other = await createUser(t);
    const sent: string[] = [];
    const received: number[] = [];
    const note = async (i: number) => {
      const body = { item: { _id: `n${i}`, text: 'x'.repeat(100 * i) } };
      sent.push(JSON.stringify(body));
      const res = await as(t, user).post('/data/notes', body).expect(200);
      received.push(Buffer.byteLength(res.text));
    };
    for (let i = 1; i <= 3; i += 1) await note(i);
    for (let i = 0; i < 2; i += 1) {
      const res = await as(t, user).get('/data/notes').expect(200);
      received.push(Buffer.byteLength(res.text));
    }
    // Refused before a route runs: no key, a wrong key. Not counted for anybody.
    await anonymous(t).get('/data/notes').expect(401);
    await as(t, 'pds_wrong').get('/data/notes').expect(401);
    // The operator's requests are nobody's usage.
    await asOperator(t).get('/admin/users').expect(200);
    // A route's class from its declaration: an export, an import, a long poll (a stream).
    const exported = await exportAs(t, user);
    expect(exported.status).toBe(200);
    const imported = await importAs(t, user, exported.text, { mode: 'upsert' });
    expect(imported.status).toBe(200);
    const head = await as(t, user)
      .get('/events', { query: { limit: '500' } })
      .expect(200);
    const waited = Date.now();
    await as(t, user)
      .get('/events', { query: { after: String(head.body.next), wait: '1' } })
      .expect(200);
    const waitedMs = Date.now() - waited;
    // Another tenant's request is its own.
    await as(t, other).get('/data/notes');

    // A response's bytes and open time are counted once it has ended, which the server may see
    // a moment after the client has it: flushed until they are there.
    const requests = 3 + 2 + 1 + 1 + 2;
    const bodiesIn =
      sent.reduce((sum, body) => sum + Buffer.byteLength(body), 0) + exported.text.length;
    // The export may travel gzip-encoded: only its upper bound is known.
    const bodiesOut = received.reduce((sum, n) => sum + n, 0);
    const flushes = t.connection.db!.collection('usage_flushes');
    await until('the bytes and the stream time counted', async () => {
      await flush();
      const docs = await flushes.find({ tenant: user.subject }).toArray();
      const sum = (name: string) => docs.reduce((total, doc) => total + Number(doc[name]), 0);
      return sum('bytesIn') >= bodiesIn && sum('bytesOut') >= bodiesOut && sum('streamMs') > 0;
    });
    const usage = await usageOf(user);
    const today = usage.days.find((d) => d.day === day());
    expect(today).toMatchObject({
      read: 3, // two pages of notes and the feed page
      write: 3,
      stream: 1,
      export: 1,
      import: 1,
      webhookEvents: 0,
    });
    expect(usage.total).toMatchObject({ read: 3, write: 3, stream: 1, export: 1, import: 1 });
    // The long poll waited about a second: its open time, in minutes, is within what the test saw.
    expect(today!.streamMinutes).toBeGreaterThanOrEqual(0.9 / 60);
    expect(today!.streamMinutes).toBeLessThanOrEqual((waitedMs + 50) / 60_000);
    // Bytes on the connection: at least every body, at most a kilobyte of headers more each.
    expect(today!.bytesIn).toBeGreaterThanOrEqual(bodiesIn);
    expect(today!.bytesIn).toBeLessThanOrEqual(bodiesIn + requests * 1024);
    expect(today!.bytesOut).toBeGreaterThanOrEqual(bodiesOut);
    expect(today!.bytesOut).toBeLessThanOrEqual(
      bodiesOut + exported.text.length + imported.text.length + requests * 2048,
    );

    const others = await usageOf(other, { from: day(), to: day() });
    expect(others.days).toEqual([expect.objectContaining({ day: day(), read: 1, write: 0 })]);
  });

  it("counts what the rate limit admitted, not what it refused, nor what a key's scope or collection limit refused", async () => {
    const user = await createUser(t);
    // Minted before the plan, so that the plan's budget is the user's key's alone.
    const readOnly = await createApiKey(t, user, { scopes: ['profile:read'] });
    const elsewhere = await createApiKey(t, user, { collections: { other: 'read' } });
    // A plan of three requests per window for each of the user's keys.
    const plan = `metered-${Date.now().toString(36)}`;
    await asOperator(t)
      .put(`/admin/plans/${plan}`, { limits: { requestsPerWindow: 3 } })
      .expect(200);
    await asOperator(t)
      .put(`/admin/users/${encodeURIComponent(user.subject)}/plans`, [
        {
          planName: plan,
          since: new Date(Date.now() - DAY_MS).toISOString(),
          until: new Date(Date.now() + DAY_MS).toISOString(),
        },
      ])
      .expect(200);
    const statuses: number[] = [];
    for (let i = 0; i < 5; i += 1) statuses.push((await as(t, user).get('/data/limited')).status);
    // The two POST /api-keys above were the key's first requests of the window.
    expect(statuses).toEqual([204, 429, 429, 429, 429]); // 204: the collection holds nothing
    // Refused for a missing scope (data:read), or a collection outside the key's: not counted.
    expect((await as(t, readOnly).get('/data/limited')).status).toBe(403);
    expect((await as(t, elsewhere).get('/data/limited')).status).toBe(403);
    await flush();
    const flushes = await t.connection
      .db!.collection('usage_flushes')
      .find({ tenant: user.subject })
      .toArray();
    const sum = (name: string) => flushes.reduce((total, doc) => total + Number(doc[name]), 0);
    expect([sum('read'), sum('write')]).toEqual([1, 2]);
  });

  it("answers a team key with the team's usage, every day of the range with zeros where nothing was used", async () => {
    const team = await createTeam(t);
    await as(t, team).get('/data/things');
    await as(t, team)
      .post('/data/things', { item: { a: 1 } })
      .expect(200);
    await flush();
    const usage = await usageOf(team.apiKey, { from: day(-2), to: day() });
    expect(usage.days.map((d) => d.day)).toEqual([day(-2), day(-1), day()]);
    expect(usage.days[0]).toMatchObject({ read: 0, write: 0, bytesIn: 0, streamMinutes: 0 });
    expect(usage.days[2]).toMatchObject({ read: 1, write: 1 });
    // Defaults: the 31 days to today.
    const defaults = await usageOf(team.apiKey);
    expect(defaults.from).toBe(day(-30));
    expect(defaults.to).toBe(day());
    expect(defaults.days).toHaveLength(31);
  });

  it('counts the events a webhook accepted, not the attempts it refused', async () => {
    const user = await createUser(t);
    // Three events (the collection created by the first write, two items), the first delivery
    // answered 500 and then everything 200: four POSTs, three events accepted.
    const answers = [500];
    let posts = 0;
    const receiver = createServer((req, res) => {
      req.resume();
      req.on('end', () => {
        posts += 1;
        res.statusCode = answers.shift() ?? 200;
        res.end();
      });
    });
    await new Promise<void>((listening) => receiver.listen(0, '127.0.0.1', listening));
    try {
      const { port } = receiver.address() as AddressInfo;
      const created = await as(t, user)
        .post('/webhooks', {
          url: `http://127.0.0.1:${port}/hook`,
          events: ['created'],
          collection: 'paid',
        })
        .expect(200);
      const id = (created.body as { webhook: { id: string } }).webhook.id;
      await as(t, user)
        .post('/data/paid', { item: { n: 1 } })
        .expect(200);
      await as(t, user)
        .post('/data/paid', { item: { n: 2 } })
        .expect(200);
      // An accepted event is counted before its delivery is recorded as delivered.
      await until('the three deliveries delivered', async () => {
        const res = await as(t, user).get(`/webhooks/${id}/deliveries`).expect(200);
        const deliveries = res.body as { status: string }[];
        return deliveries.length === 3 && deliveries.every((d) => d.status === 'delivered');
      });
      expect(posts).toBe(4);
      await flush();
      const docs = await t.connection
        .db!.collection('usage_flushes')
        .find({ tenant: user.subject })
        .toArray();
      expect(docs.reduce((sum, doc) => sum + Number(doc.webhookEvents), 0)).toBe(3);
    } finally {
      await new Promise((closed) => receiver.close(closed));
    }
  });

  it('needs usage:read, a root or team key', async () => {
    const user = await createUser(t);
    const narrow = await createApiKey(t, user, { scopes: ['data:read'] });
    const res = await as(t, narrow.apiKey).get('/me/usage').expect(403);
    expect(res.body).toMatchObject({ code: 'INSUFFICIENT_SCOPE' });
    const reader = await createApiKey(t, user, { scopes: ['usage:read'] });
    await as(t, reader.apiKey).get('/me/usage').expect(200);
    const sub = await createSubKey(t, user);
    await as(t, sub).get('/me/usage').expect(403);
    await asOperator(t).get('/me/usage').expect(403);
    await anonymous(t).get('/me/usage').expect(401);
  });

  it.each([
    [{ from: '2026-1-05' }, 'from'],
    [{ to: '2026-02-30' }, 'to'],
    [{ from: '2026-01-06', to: '2026-01-05' }, 'from'],
    [{ from: '2025-01-01', to: '2026-01-02' }, 'to'],
    [{ since: '2026-01-01' }, 'since'],
  ])('refuses %j with 400 naming %s', async (query, field) => {
    const user = await createUser(t);
    const res = await as(t, user).get('/me/usage', { query }).expect(400);
    expect(res.body.code).toBe('VALIDATION_FAILED');
    expect(res.body.errors.map((e: { field: string }) => e.field)).toContain(field);
  });

  it('lists every tenant per day for the operator: keyset pages, one tenant, NDJSON for billing', async () => {
    const users = [await createUser(t), await createUser(t), await createUser(t)];
    for (const [i, user] of users.entries())
      for (let n = 0; n <= i; n += 1) await as(t, user).get('/data/none');
    await flush();
    const rows: Document[] = [];
    let next: string | undefined = `/admin/usage?from=${day()}&to=${day()}&limit=2`;
    while (next) {
      const res: { body: unknown; headers: Record<string, string | undefined> } = await asOperator(
        t,
      )
        .get(next)
        .expect(200);
      rows.push(...(res.body as Document[]));
      expect((res.body as Document[]).length).toBeLessThanOrEqual(2);
      next = /<([^>]+)>; rel="next"/.exec(res.headers.link ?? '')?.[1];
    }
    const keys = rows.map((row) => `${row.day}/${row.tenant.kind}/${row.tenant.id}`);
    expect(keys).toEqual([...keys].sort());
    expect(new Set(keys).size).toBe(keys.length);
    for (const [i, user] of users.entries())
      expect(rows.find((row) => row.tenant.id === user.subject)).toMatchObject({
        day: day(),
        tenant: { kind: 'user', id: user.subject },
        read: i + 1,
      });

    const one = await asOperator(t)
      .get('/admin/usage', { query: { tenant: `user:${users[1]!.subject}` } })
      .expect(200);
    expect(one.body).toEqual([expect.objectContaining({ day: day(), read: 2 })]);

    const exported = await t
      .http()
      .get('/admin/usage')
      .query({ from: day(), to: day() })
      .set('X-Api-Key', TEST_ADMIN_KEY)
      .set('Accept', 'application/x-ndjson')
      .buffer(true)
      .parse(ndjsonText)
      .expect(200);
    expect(exported.headers['content-type']).toMatch(/^application\/x-ndjson/);
    expect(parseLines(exported.body as string)).toEqual(rows);
  });

  it('refuses wrong operator queries and other keys', async () => {
    const user = await createUser(t);
    await as(t, user).get('/admin/usage').expect(403);
    const queries: Record<string, string>[] = [
      { tenant: 'users:ada' },
      { to: '2026-13-01' },
      { 'after[row]': 'nope' },
      { sort: 'day' },
    ];
    for (const query of queries)
      expect((await asOperator(t).get('/admin/usage', { query }).expect(400)).body.code).toBe(
        'VALIDATION_FAILED',
      );
  });

  it('deletes the days past USAGE_RETENTION_DAYS and keeps the others', async () => {
    const flushes = t.connection.db!.collection<{ _id: string }>('usage_flushes');
    const row = (id: string, offset: number) => ({
      _id: id,
      row: `${day(offset)}/user/retention`,
      day: day(offset),
      tenantKind: 'user',
      tenant: 'retention',
      read: 1,
      write: 0,
      stream: 0,
      export: 0,
      import: 0,
      streamMs: 0,
      bytesIn: 0,
      bytesOut: 0,
      webhookEvents: 0,
      flushedAt: new Date(),
    });
    // 30 days kept: today and the 29 before it.
    await flushes.insertMany([row('retention-old', -30), row('retention-kept', -29)]);
    expect(await t.app.get(UsageSweeper).sweep()).toBeGreaterThanOrEqual(1);
    const left = await flushes.find({ tenant: 'retention' }).toArray();
    expect(left.map((doc) => doc._id)).toEqual(['retention-kept']);
  });
});

/** What the flush rows of usage_flushes add up to for `tenant`, today and yesterday. */
async function storedTotals(client: MongoClient, dbName: string, tenant: string) {
  const docs = await client
    .db(dbName)
    .collection('usage_flushes')
    .find({ tenant, day: { $gte: day(-1) } })
    .toArray();
  return {
    read: docs.reduce((sum, doc) => sum + Number(doc.read), 0),
    write: docs.reduce((sum, doc) => sum + Number(doc.write), 0),
    ids: docs.map((doc) => String(doc._id)),
  };
}

/** What the inserts into usage_flushes among `commands` held for `tenant`. */
function heldTotals(commands: Document[], tenant: string) {
  const docs = commands
    .filter((command) => command.insert === 'usage_flushes')
    .flatMap((command) => (command.documents ?? []) as Document[])
    .filter((doc) => doc.tenant === tenant);
  return {
    read: docs.reduce((sum, doc) => sum + Number(doc.read), 0),
    write: docs.reduce((sum, doc) => sum + Number(doc.write), 0),
  };
}

describe('usage metering (two instances, a lost reply, SIGTERM and SIGKILL)', () => {
  const dbName = uniqueDbName(`${__filename}-instances`);
  // A dropped reply ends with the driver's socket timeout: max(query, selection) + selection,
  // 4 s with the default selection timeout.
  const ENV = {
    LOG_LEVEL: 'warn',
    MONGODB_DB_NAME: dbName,
    USAGE_FLUSH_MS: '300',
    QUERY_TIMEOUT_MS: '1000',
  };
  let instances: ProxiedInstances | undefined;
  let proxyA: WireProxy;
  let proxyB: WireProxy;
  let a: ServiceProcess;
  let b: ServiceProcess;
  let client: MongoClient;

  beforeAll(async () => {
    instances = await startProxiedInstances(ENV);
    ({ a, b, proxyA, proxyB } = instances);
    client = new MongoClient(testDatabaseUri());
  }, 180_000);

  afterAll(async () => {
    await instances?.close();
    await client?.db(dbName).dropDatabase();
    await client?.close();
  });

  it('counts what both made, once each, less what the killed one had not written', async () => {
    const created = await a.send(
      'POST',
      '/admin/users',
      { 'X-Api-Key': TEST_ADMIN_KEY },
      {
        email: `usage-${Date.now()}@example.com`,
      },
    );
    expect(created.status).toBe(200);
    const { apiKey, profile } = JSON.parse(created.body) as {
      apiKey: string;
      profile: { subject: string };
    };
    const key = { 'X-Api-Key': apiKey };
    const made = { read: 0, write: 0 };
    const write = async (service: ServiceProcess, i: number) => {
      expect((await service.send('POST', '/data/notes', key, { item: { n: i } })).status).toBe(200);
      made.write += 1;
    };
    const read = async (service: ServiceProcess) => {
      expect((await service.send('GET', '/data/notes', key)).status).toBe(200);
      made.read += 1;
    };

    // A's first flush is written, and its reply never comes back: A sends it again.
    proxyA.dropReplyOnce((command) => command.insert === 'usage_flushes');
    for (let i = 0; i < 4; i += 1) await write(a, i);
    for (let i = 0; i < 3; i += 1) await read(a);
    for (let i = 0; i < 2; i += 1) await write(b, 10 + i);
    for (let i = 0; i < 5; i += 1) await read(b);
    // Not counted: no key; the operator.
    expect((await b.send('GET', '/data/notes')).status).toBe(401);
    expect((await a.send('GET', '/admin/users', { 'X-Api-Key': TEST_ADMIN_KEY })).status).toBe(200);
    await until(
      'the reply to a flush of A was dropped',
      () => proxyA.droppedReplies().length === 1,
    );
    const dropped = heldTotals(proxyA.droppedReplies(), profile.subject);
    expect(dropped.write + dropped.read).toBeGreaterThan(0);

    // A stops: SIGTERM, and its last counts are written before it exits.
    a.process.kill('SIGTERM');
    expect((await a.exited).code).toBe(0);
    await until(
      "B's counts written too",
      async () => {
        const stored = await storedTotals(client, dbName, profile.subject);
        return stored.read === made.read && stored.write === made.write;
      },
      10_000,
    );
    const beforeKill = await storedTotals(client, dbName, profile.subject);

    // B's next flush is held on its way to the database; B is killed once it is.
    proxyB.hold((command) => command.insert === 'usage_flushes');
    for (let i = 0; i < 3; i += 1) await read(b);
    await write(b, 99);
    await until("B's next flush held", () => proxyB.held() >= 1, 5_000);
    await b.kill();
    const lost = heldTotals(proxyB.heldCommands().slice(0, 1), profile.subject);
    // What the held flush carried, at most what B counted since its last written flush.
    expect(lost.read + lost.write).toBeGreaterThan(0);
    expect(lost.read).toBeLessThanOrEqual(3);
    expect(lost.write).toBeLessThanOrEqual(1);

    const stored = await storedTotals(client, dbName, profile.subject);
    // Exactly what was made before the kill: nothing twice (A's resent flush), nothing of A lost,
    // and of B only what was counted after its last written flush.
    expect({ read: stored.read, write: stored.write }).toEqual({
      read: made.read - 3,
      write: made.write - 1,
    });
    expect(stored.ids).toEqual(beforeKill.ids);
  }, 120_000);
});
