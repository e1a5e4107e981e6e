import { randomBytes } from 'node:crypto';
import { createTestApp, TEST_ADMIN_KEY, type TestApp } from '../support/app';
import { createUser, type TestUser } from '../support/factories';
import { anonymous, as, type Client } from '../support/http';
import { expectProblem } from '../support/problems';
import { parseExposition, valueOf, type Sample } from '../support/prometheus';
import { until } from '../support/until';

const UNMATCHED = '(unmatched)';
const ITEM_TEMPLATE = '/data/:collection/:indexName/:indexValue';

function hex(bytes: number): string {
  return randomBytes(bytes).toString('hex');
}

async function scrape(t: TestApp, token?: string): Promise<Sample[]> {
  const req = t.http().get('/metrics');
  if (token) void req.set('Authorization', `Bearer ${token}`);
  const res = await req.expect(200);
  // The text exposition format, version 0.0.4 (parameters in any order).
  expect(res.headers['content-type']).toMatch(/^text\/plain;/);
  expect(res.headers['content-type']).toContain('version=0.0.4');
  return parseExposition(res.text);
}

/**
 * Waits until the background work of the writes so far is done: a write's intent is deleted
 * after its answer, up to INTENT_CLOSE_SPACING_MS later, which would otherwise land in whatever
 * the test measures next (a command, a connection in use).
 */
async function writesSettled(t: TestApp): Promise<void> {
  const intents = t.connection.collection('event_intents');
  await until('the writes’ intents deleted', async () => (await intents.countDocuments()) === 0);
}

/** The route templates Express serves: the only values the route label may take, besides UNMATCHED. */
function routeTemplates(t: TestApp): Set<string> {
  const express = t.app.getHttpAdapter().getInstance() as {
    router: { stack: { route?: { path: string } }[] };
  };
  return new Set(express.router.stack.flatMap((layer) => (layer.route ? [layer.route.path] : [])));
}

/** The series of the service's own metrics (the process's vary with GC and handles). */
function ownSeries(samples: Sample[]): Sample[] {
  return samples.filter((s) => /^(http|mongodb)_/.test(s.name));
}

describe('GET /metrics', () => {
  let t: TestApp;
  let user: TestUser;
  let client: Client;

  beforeAll(async () => {
    t = await createTestApp(__filename, {
      METRICS_DATABASE_COMMANDS: 'true',
      // The background work of every instance (the feed's hub and sweeps, webhook deliveries,
      // drop and erasure sweeps) checks connections out on its own schedule; pushed out past
      // this file's run, the pool gauges read between requests show the requests' own use.
      EVENTS_POLL_MS: '60000',
      EVENTS_SWEEP_MS: '60000',
      LIFECYCLE_POLL_MS: '60000',
      IDEMPOTENCY_SWEEP_INTERVAL_MS: '600000',
      EXPIRY_SWEEP_MS: '600000',
      FILE_SWEEP_MS: '600000',
      // A key or registry entry cached by an earlier test may be close to its end: expiring within
      // the round-trip count's loop, it would be read again there (each cache is 5 s by default).
      API_KEY_CACHE_MS: '60000',
      REGISTRY_CACHE_MS: '60000',
    });
    user = await createUser(t);
    client = as(t, user);
  });

  afterAll(async () => {
    await t.close();
  });

  it('serves the Prometheus text format without a key: requests, database, pool, rate limits, process', async () => {
    const samples = await scrape(t);
    const names = new Set(samples.map((s) => s.name));
    for (const name of [
      'http_requests_total',
      'http_request_duration_seconds_bucket',
      'http_requests_in_flight',
      'mongodb_command_duration_seconds_count',
      'mongodb_pool_connections',
      'mongodb_pool_connections_in_use',
      'mongodb_pool_waiting',
      'nodejs_eventloop_lag_seconds',
      'nodejs_eventloop_lag_p99_seconds',
      'process_cpu_user_seconds_total',
      'process_resident_memory_bytes',
      'nodejs_heap_size_used_bytes',
    ]) {
      expect({ name, present: names.has(name) }).toEqual({ name, present: true });
    }
    expect(valueOf(samples, 'http_rate_limit_rejections_total', { reason: 'rate_limit' })).toBe(0);
    expect(valueOf(samples, 'http_rate_limit_rejections_total', { reason: 'auth_failures' })).toBe(
      0,
    );
    expect(valueOf(samples, 'mongodb_pool_connections')).toBeGreaterThan(0);
  });

  it('labels requests by route template, never by a raw path, collection name or id', async () => {
    const collections = [`alpha${hex(4)}`, `beta${hex(4)}`];
    const ids: string[] = [];
    for (const collection of collections) {
      const created = await client.post(`/data/${collection}`, { item: { n: 1 } }).expect(200);
      ids.push(created.body._id as string);
      await client.get(`/data/${collection}/_id/${created.body._id}`).expect(200);
      await client.get(`/data/${collection}`).expect(200);
    }
    const unknown = `/nowhere${hex(4)}/${hex(4)}`;
    await client.get(unknown).expect(404);

    const samples = await scrape(t);
    const requests = (labels: Record<string, string>) =>
      valueOf(samples, 'http_requests_total', labels);
    expect(requests({ method: 'POST', route: '/data/:collection', status: '200' })).toBe(2);
    expect(requests({ method: 'GET', route: ITEM_TEMPLATE, status: '200' })).toBe(2);
    expect(requests({ method: 'GET', route: '/data/:collection', status: '200' })).toBe(2);
    expect(requests({ method: 'GET', route: UNMATCHED, status: '404' })).toBe(1);
    expect(
      valueOf(samples, 'http_request_duration_seconds_count', {
        method: 'GET',
        route: ITEM_TEMPLATE,
        status_class: '2xx',
      }),
    ).toBe(2);

    const templates = routeTemplates(t);
    const routes = new Set(samples.flatMap((s) => (s.labels.route ? [s.labels.route] : [])));
    expect([...routes].filter((r) => r !== UNMATCHED && !templates.has(r))).toEqual([]);
    const values = samples.flatMap((s) => Object.values(s.labels));
    for (const raw of [...collections, ...ids, unknown, user.subject]) {
      expect({ raw, inLabels: values.filter((v) => v.includes(raw)) }).toEqual({
        raw,
        inLabels: [],
      });
    }
  });

  it('counts each request once, and leaves its own scrapes out', async () => {
    const collection = `counted${hex(4)}`;
    const created = await client.post(`/data/${collection}`, { item: { n: 1 } }).expect(200);
    const path = `/data/${collection}/_id/${created.body._id}`;
    const labels = { method: 'GET', route: ITEM_TEMPLATE, status: '200' };
    const before = valueOf(await scrape(t), 'http_requests_total', labels);
    for (let i = 0; i < 5; i++) await client.get(path).expect(200);
    await client.get(`/data/${collection}/_id/${'0'.repeat(24)}`).expect(404);
    const after = await scrape(t);
    expect(valueOf(after, 'http_requests_total', labels)).toBe(before + 5);
    expect(valueOf(after, 'http_requests_total', { ...labels, status: '404' })).toBeGreaterThan(0);
    // The scrape being answered is not in flight, and no scrape is counted.
    expect(valueOf(after, 'http_requests_in_flight')).toBe(0);
    expect(after.filter((s) => s.labels.route === '/metrics')).toEqual([]);
  });

  it('times and counts database commands by name, and counts failed commands as errors', async () => {
    const before = await scrape(t);
    const collection = `dupes${hex(4)}`;
    await client.post(`/data/${collection}`, { item: { email: 'x@example.com' } }).expect(200);
    await client.post(`/data/${collection}`, { item: { email: 'x@example.com' } }).expect(200);
    // The server refuses the unique index over duplicates: a failed createIndexes command.
    const refused = await client
      .post(`/data/${collection}/index`, { field: 'email', unique: true })
      .expect(409);
    expect(refused.body.code).toBe('UNIQUE_INDEX_DUPLICATES');
    await writesSettled(t);
    const after = await scrape(t);
    const count = (samples: Sample[], command: string) =>
      valueOf(samples, 'mongodb_command_duration_seconds_count', { command });
    expect(count(after, 'insert') - count(before, 'insert')).toBeGreaterThanOrEqual(2);
    expect(count(after, 'createIndexes')).toBeGreaterThan(count(before, 'createIndexes'));
    const errors = (samples: Sample[]) =>
      valueOf(samples, 'mongodb_command_errors_total', { command: 'createIndexes' });
    expect(errors(after)).toBeGreaterThanOrEqual(errors(before) + 1);
    expect(
      valueOf(after, 'mongodb_command_duration_seconds_sum', { command: 'insert' }),
    ).toBeGreaterThan(0);
    // Pool gauges are balanced: nothing is checked out or waiting between requests.
    expect(valueOf(after, 'mongodb_pool_connections_in_use')).toBe(0);
    expect(valueOf(after, 'mongodb_pool_waiting')).toBe(0);
  });

  it('counts the round trips to the database: a repeated GET by _id is one, its key and collection cached', async () => {
    const collection = `trips${hex(4)}`;
    const created = await client.post(`/data/${collection}`, { item: { n: 1 } }).expect(200);
    const path = `/data/${collection}/_id/${created.body._id}`;
    // This instance has the key and the registry entry now (API_KEY_CACHE_MS, REGISTRY_CACHE_MS).
    await client.get(path).expect(200);
    // Done before the count starts, the POST's intent deletion is not one of the GETs' trips.
    await writesSettled(t);
    const sent = (samples: Sample[]) => valueOf(samples, 'mongodb_commands_total');
    const timed = (samples: Sample[]) =>
      samples
        .filter((s) => s.name === 'mongodb_command_duration_seconds_count')
        .reduce((sum, s) => sum + s.value, 0);
    const before = await scrape(t);
    for (let i = 0; i < 10; i++) await client.get(path).expect(200);
    const after = await scrape(t);
    expect(sent(after) - sent(before)).toBe(10);
    // The same number as the driver's command monitoring sees.
    expect(timed(after) - timed(before)).toBe(10);
  });

  it('keeps the number of series bounded whatever paths, names and ids clients send', async () => {
    const raws: string[] = [];
    const burst = async () => {
      for (let i = 0; i < 20; i++) {
        const name = `c${hex(6)}`;
        const id = hex(12);
        const junk = hex(5);
        raws.push(name, id, junk);
        await client.get(`/data/${name}`).expect(204);
        await client.get(`/data/${name}/_id/${id}`).expect(404);
        await client.delete(`/data/${name}/_id/${id}`).expect(404);
        await client.get(`/data/${name}/count`).expect(200);
        await client.get(`/project/${id}`).expect(404);
        await client.post(`/data/bad name ${junk}`, { item: {} }).expect(400);
        await client.get(`/${junk}/${id}`).expect(404);
        await client.put(`/data/${name}/${junk}/${id}/${junk}`, {}).expect(404);
        await anonymous(t).get(`/data/${name}?q${junk}=${id}`).expect(401);
        await client.post(`/data/${name}/_id/${id}`, {}).expect(405);
      }
    };
    await burst();
    const first = await scrape(t);
    await burst();
    const second = await scrape(t);

    // The second burst of new paths, names and ids added no series at all.
    expect(ownSeries(second).length).toBe(ownSeries(first).length);
    const text = second.map((s) => JSON.stringify(s.labels)).join('\n');
    expect(raws.filter((raw) => text.includes(raw))).toEqual([]);
    // The service's own series and the whole scrape stay well inside a scrape budget.
    expect(ownSeries(second).length).toBeLessThan(1_000);
    expect(second.length).toBeLessThan(2_000);
  });
});

describe('GET /metrics with METRICS_TOKEN', () => {
  const token = `metrics-${hex(16)}`;
  let t: TestApp;

  beforeAll(async () => {
    t = await createTestApp(__filename, { METRICS_TOKEN: token });
  });

  afterAll(async () => {
    await t.close();
  });

  it('answers the token, sent as Authorization: Bearer', async () => {
    const samples = await scrape(t, token);
    expect(samples.some((s) => s.name === 'http_requests_in_flight')).toBe(true);
  });

  it('leaves database command metrics off unless METRICS_DATABASE_COMMANDS asks for them', async () => {
    await t.http().get('/health/ready').expect(200);
    const samples = await scrape(t, token);
    expect(t.connection.getClient().options.monitorCommands).toBe(false);
    expect(samples.some((s) => s.name.startsWith('mongodb_command_'))).toBe(false);
    // The pool gauges come from events the driver emits anyway.
    expect(samples.some((s) => s.name === 'mongodb_pool_connections')).toBe(true);
  });

  it.each([
    ['no credentials', {}],
    ['another token', { Authorization: `Bearer ${token}x` }],
    ['the operator key', { Authorization: `Bearer ${TEST_ADMIN_KEY}` }],
    ['the token as X-Api-Key', { 'X-Api-Key': token }],
    ['the token without the Bearer scheme', { Authorization: token }],
  ])('refuses %s with 401 UNAUTHENTICATED', async (_case, headers) => {
    const res = await t.http().get('/metrics').set(headers).expect(401);
    expectProblem(res, 401, 'UNAUTHENTICATED');
    expect(res.headers['www-authenticate']).toBe('Bearer realm="metrics"');
    expect(res.text).not.toContain('http_requests_total');
  });
});

describe('GET /metrics and the rate limits', () => {
  let t: TestApp;

  beforeAll(async () => {
    t = await createTestApp(__filename, {
      RATE_LIMIT_MAX: '3',
      AUTH_FAILURE_MAX: '2',
      AUTH_FAILURE_WINDOW_MS: '60000',
    });
  });

  afterAll(async () => {
    await t.close();
  });

  it('is never rate limited, and counts 429s by reason', async () => {
    const user = await createUser(t);
    for (let i = 0; i < 3; i++) await as(t, user).get('/project').expect(200);
    await as(t, user).get('/project').expect(429);
    await as(t, user).get('/project').expect(429);
    // Two unknown keys use up the address's failed-authentication budget; then a wrong key is refused.
    await as(t, `pds_${hex(32)}`)
      .get('/project')
      .expect(401);
    await as(t, `pds_${hex(32)}`)
      .get('/project')
      .expect(401);
    await as(t, `pds_${hex(32)}`)
      .get('/project')
      .expect(429);

    // Far more scrapes, without a key, than the per-address limit of 3 allows.
    let samples: Sample[] = [];
    for (let i = 0; i < 6; i++) {
      const res = await t.http().get('/metrics').expect(200);
      expect(res.headers['x-ratelimit-limit']).toBeUndefined();
      samples = parseExposition(res.text);
    }
    expect(valueOf(samples, 'http_rate_limit_rejections_total', { reason: 'rate_limit' })).toBe(2);
    expect(valueOf(samples, 'http_rate_limit_rejections_total', { reason: 'auth_failures' })).toBe(
      1,
    );
    expect(
      valueOf(samples, 'http_requests_total', { method: 'GET', route: '/project', status: '429' }),
    ).toBe(3);
  });
});

describe('METRICS_ENABLED=false', () => {
  let t: TestApp;

  beforeAll(async () => {
    t = await createTestApp(__filename, { METRICS_ENABLED: 'false' });
  });

  afterAll(async () => {
    await t.close();
  });

  it('answers /metrics 404 like any unknown route and leaves command monitoring off', async () => {
    const res = await t.http().get('/metrics').expect(404);
    expectProblem(res, 404, 'ROUTE_NOT_FOUND');
    expect(t.connection.getClient().options.monitorCommands).toBe(false);
    await t.http().get('/health').expect(200);
  });
});
