import { MongoClient } from 'mongodb';
import { tenantDatabaseName } from '../../src/placement';
import {
  createTestApp,
  testDatabaseUri,
  TEST_ADMIN_KEY,
  uniqueDbName,
  type TestApp,
} from '../support/app';
import { createTeam, createUser, type TestUser } from '../support/factories';
import { startOwnDatabase, type OwnDatabase } from '../support/own-database';
import { expectProblem } from '../support/problems';

/**
 * Tenants placed on three database processes as three clusters in two regions (and a fourth,
 * closed cluster), served by two instances on one main database: the spread of new tenants,
 * regions, where the data lands, the operator's view, and a frozen cluster that only its own
 * tenants notice.
 */
const SELECTION_TIMEOUT_MS = 2000;
/** As for a frozen main database: every request answers within the selection timeout and a second. */
const BOUND_MS = SELECTION_TIMEOUT_MS + 1000;
const SPREAD_TENANTS = 300;
/** Tenant creations in flight at once: each sees the counts at most this many creations stale. */
const CONCURRENCY = 6;
const admin = { 'X-Api-Key': TEST_ADMIN_KEY };

let clusterB: OwnDatabase;
let clusterC: OwnDatabase;
let one: TestApp;
let two: TestApp;
let clusters: Record<string, { uri: string; region: string; open?: boolean }>;
const dbName = uniqueDbName(__filename);

beforeAll(async () => {
  [clusterB, clusterC] = await Promise.all([
    startOwnDatabase('cluster-b'),
    startOwnDatabase('cluster-c'),
  ]);
  clusters = {
    a: { uri: testDatabaseUri(), region: 'eu' },
    b: { uri: clusterB.uri, region: 'eu' },
    c: { uri: clusterC.uri, region: 'us' },
    // Closed: being retired, it takes no new tenant; the only cluster of its region.
    d: { uri: clusterC.uri, region: 'ap', open: false },
  };
  const env = {
    MONGODB_DB_NAME: dbName,
    DATA_CLUSTERS: JSON.stringify(clusters),
    DB_SERVER_SELECTION_TIMEOUT_MS: String(SELECTION_TIMEOUT_MS),
  };
  one = await createTestApp(__filename, env);
  two = await createTestApp(__filename, env);
});

afterAll(async () => {
  clusterC?.thaw();
  await two?.app.close();
  await one?.close();
  await Promise.all([clusterB?.stop(), clusterC?.stop()]);
});

async function placementOf(t: TestApp, kind: 'user' | 'team', id: string) {
  const res = await t
    .http()
    .get(`/admin/tenants/${kind}/${encodeURIComponent(id)}/placement`)
    .set(admin);
  expect(res.status).toBe(200);
  return res.body as { cluster: string | null; database: string };
}

/** Runs `work` for 0..count-1, at most `limit` at once. */
async function inBatches<T>(
  count: number,
  limit: number,
  work: (i: number) => Promise<T>,
): Promise<T[]> {
  const results: T[] = [];
  for (let start = 0; start < count; start += limit) {
    const batch = Array.from({ length: Math.min(limit, count - start) }, (_, j) => work(start + j));
    results.push(...(await Promise.all(batch)));
  }
  return results;
}

describe('placing new tenants', () => {
  it('spreads tenants created without a region evenly over the open clusters, through both instances', async () => {
    const users = await inBatches(SPREAD_TENANTS, CONCURRENCY, (i) =>
      createUser(i % 2 ? one : two),
    );
    const where = await inBatches(SPREAD_TENANTS, 20, (i) =>
      placementOf(one, 'user', (users[i] as TestUser).subject),
    );
    const count = (cluster: string) => where.filter((p) => p.cluster === cluster).length;
    const even = SPREAD_TENANTS / 3;
    for (const cluster of ['a', 'b', 'c']) {
      expect(count(cluster)).toBeGreaterThanOrEqual(even * 0.9);
      expect(count(cluster)).toBeLessThanOrEqual(even * 1.1);
    }
    expect(count('d')).toBe(0);
    // Each in a database of its own, named by the digest.
    for (const [i, placement] of where.entries()) {
      const subject = (users[i] as TestUser).subject;
      expect(placement.database).toBe(tenantDatabaseName(dbName, { kind: 'user', id: subject }));
    }
    expect(new Set(where.map((p) => p.database)).size).toBe(SPREAD_TENANTS);
  });

  it('places a tenant with a region only on that region’s open clusters', async () => {
    const us = await inBatches(20, CONCURRENCY, () => createUser(one, { region: 'us' }));
    for (const user of us) expect((await placementOf(two, 'user', user.subject)).cluster).toBe('c');
    const teams = await inBatches(10, CONCURRENCY, () => createTeam(two, undefined, 'eu'));
    for (const team of teams) {
      expect(['a', 'b']).toContain((await placementOf(one, 'team', team.teamId)).cluster);
    }
  });

  it('refuses an unknown region, and a region whose clusters are all closed, creating nothing', async () => {
    for (const [region, code] of [
      ['mars', 'UNKNOWN_REGION'],
      ['ap', 'NO_OPEN_CLUSTER'],
    ] as const) {
      const email = `nowhere-${region}@example.com`;
      expectProblem(
        await one.http().post('/admin/users').set(admin).send({ email, region }),
        400,
        code,
      );
      const listed = await one.http().get('/admin/users').query({ email }).set(admin).expect(200);
      expect(listed.body).toEqual([]);
      expectProblem(
        await one.http().post('/admin/teams').set(admin).send({ name: 'x', region }),
        400,
        code,
      );
    }
    expectProblem(
      await one
        .http()
        .post('/admin/users')
        .set(admin)
        .send({ email: 'n@example.com', region: null }),
      400,
      'VALIDATION_FAILED',
    );
  });
});

describe('a placed tenant', () => {
  it('keeps its items and its change feed on its cluster, through either instance', async () => {
    const client = new MongoClient(clusterB.uri, { serverSelectionTimeoutMS: 5000 });
    try {
      let user: TestUser | undefined;
      // The spread puts about a third of new tenants on b: create until one lands there.
      for (let i = 0; i < 30 && !user; i += 1) {
        const candidate = await createUser(one);
        if ((await placementOf(one, 'user', candidate.subject)).cluster === 'b') user = candidate;
      }
      if (!user) throw new Error('no tenant was placed on cluster b in 30 creations');
      await one
        .http()
        .post('/data/orders')
        .set('X-Api-Key', user.apiKey)
        .send({ item: { _id: 'o1', n: 1 } })
        .expect(200);
      const read = await two
        .http()
        .get('/data/orders/_id/o1')
        .set('X-Api-Key', user.apiKey)
        .expect(200);
      expect(read.body).toMatchObject({ _id: 'o1', n: 1 });

      const entry = await one.connection
        .collection('data_collections')
        .findOne({ tenant: user.subject, name: 'orders' });
      const database = tenantDatabaseName(dbName, { kind: 'user', id: user.subject });
      expect(entry).toMatchObject({ cluster: 'b', database });
      const native = client.db(database).collection(entry?.physical as string);
      expect(await native.countDocuments({ _id: 'o1' as never })).toBe(1);
      // Its change feed (the event of the item, with the item in it) is in b's feed database.
      const ofTenant = { tenantKind: 'user', tenant: user.subject };
      const events = await client.db(dbName).collection('events').find(ofTenant).toArray();
      expect(events.map((e) => [e.resource, e.key, e.data?.n])).toEqual([
        ['collection', 'orders', undefined],
        ['item', 'o1', 1],
      ]);
      const feed = await two
        .http()
        .get('/events')
        .query({ after: 0 })
        .set('X-Api-Key', user.apiKey);
      expect((feed.body as { events: unknown[] }).events).toHaveLength(2);
      // Nothing of it in the main database.
      const main = await one.connection
        .db!.listCollections({ name: entry?.physical as string })
        .toArray();
      expect(main).toEqual([]);
      expect(await one.connection.collection('events').countDocuments(ofTenant)).toBe(0);
    } finally {
      await client.close();
    }
  });

  it('shows operators every cluster with its tenants, collections and reachability', async () => {
    const res = await two.http().get('/admin/clusters').set(admin).expect(200);
    type Cluster = { name: string; tenants: number; collections: number };
    const byName = Object.fromEntries(
      (res.body as Cluster[]).map((cluster) => [cluster.name, cluster]),
    );
    expect(Object.keys(byName).sort()).toEqual(['a', 'b', 'c', 'd']);
    expect(byName.d).toMatchObject({
      region: 'ap',
      open: false,
      tenants: 0,
      collections: 0,
      reachable: true,
    });
    expect(byName.b).toMatchObject({ region: 'eu', open: true, reachable: true });
    expect(byName.b?.collections).toBeGreaterThanOrEqual(1);
    const placed = await one.connection.collection('tenant_placements').countDocuments();
    const tenants = ['a', 'b', 'c', 'd'].map((n) => byName[n]?.tenants ?? 0);
    expect(tenants.reduce((x, y) => x + y)).toBe(placed);
  });

  it('is refused as a placement of an unknown kind, and 404 for no such tenant', async () => {
    expectProblem(
      await one.http().get('/admin/tenants/robot/x/placement').set(admin),
      400,
      'VALIDATION_FAILED',
    );
    expectProblem(
      await one.http().get('/admin/tenants/user/nobody/placement').set(admin),
      404,
      'PROFILE_NOT_FOUND',
    );
    expectProblem(
      await one
        .http()
        .get('/admin/tenants/team/00000000-0000-4000-8000-000000000000/placement')
        .set(admin),
      404,
      'TEAM_NOT_FOUND',
    );
  });
});

describe('a frozen cluster', () => {
  it('answers its own tenants 503 within the bound, and nobody else notices', async () => {
    const onC = await createUser(one, { region: 'us' });
    const onA: TestUser[] = [];
    for (let i = 0; i < 30 && onA.length === 0; i += 1) {
      const candidate = await createUser(one, { region: 'eu' });
      if ((await placementOf(one, 'user', candidate.subject)).cluster === 'a') onA.push(candidate);
    }
    const others = [...onA, await createUser(two, { region: 'eu' })];
    for (const user of [onC, ...others]) {
      await one
        .http()
        .post('/data/notes')
        .set('X-Api-Key', user.apiKey)
        .send({ item: { n: 0 } })
        .expect(200);
    }

    clusterC.freeze();
    try {
      for (const t of [one, two]) {
        const started = Date.now();
        const res = await t.http().get('/data/notes').set('X-Api-Key', onC.apiKey);
        expect(Date.now() - started).toBeLessThan(BOUND_MS);
        expectProblem(res, 503, 'DATABASE_UNAVAILABLE');
        expect(Number(res.headers['retry-after'])).toBeGreaterThan(0);
      }
      // The tenants of the other clusters, and the control plane, keep working on both instances.
      for (const [i, user] of others.entries()) {
        for (const t of [one, two]) {
          await t
            .http()
            .post('/data/notes')
            .set('X-Api-Key', user.apiKey)
            .send({ item: { n: i } })
            .expect(200);
          await t.http().get('/data/notes').set('X-Api-Key', user.apiKey).expect(200);
          await t.http().get('/me').set('X-Api-Key', user.apiKey).expect(200);
        }
      }
      await one.http().get('/admin/users').set(admin).expect(200);
      const created = await createUser(two, { region: 'eu' });
      expect(['a', 'b']).toContain((await placementOf(two, 'user', created.subject)).cluster);
      // The frozen cluster (and the closed one on the same server) shows as unreachable.
      const listed = (await one.http().get('/admin/clusters').set(admin).expect(200)).body as {
        name: string;
        reachable: boolean;
      }[];
      expect(Object.fromEntries(listed.map((c) => [c.name, c.reachable]))).toEqual({
        a: true,
        b: true,
        c: false,
        d: false,
      });
    } finally {
      clusterC.thaw();
    }
  });
});

describe('a placement naming a cluster that is not configured', () => {
  it('stops the service at start, naming the cluster', async () => {
    const { c, d, ...rest } = clusters;
    void c;
    void d;
    await expect(
      createTestApp(__filename, { MONGODB_DB_NAME: dbName, DATA_CLUSTERS: JSON.stringify(rest) }),
    ).rejects.toThrow(/placements name clusters that DATA_CLUSTERS does not list: c\b/);
  });
});
