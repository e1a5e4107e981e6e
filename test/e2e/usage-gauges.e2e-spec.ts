import request from 'supertest';
import { MongoClient, type Document } from 'mongodb';
import {
  TEST_ADMIN_KEY,
  createTestApp,
  testDatabaseUri,
  uniqueDbName,
  type TestApp,
} from '../support/app';
import { createUser } from '../support/factories';
import { parseLines } from '../support/ndjson';
import {
  startProxiedInstances,
  type ProxiedInstances,
  type ServiceProcess,
} from '../support/service-process';
import { until } from '../support/until';
import type { WireProxy } from '../support/wire-proxy';
import { UsageFlusher, UsageSnapshots } from '../../src/usage';

/**
 * The daily gauges of usage (items and file bytes stored per tenant): two instances both try
 * the day's snapshot and exactly one value per tenant, day and gauge is written, equal to what
 * the test stored; the holder is killed mid-snapshot and the other takes it over once the lease
 * has run out; and an erased tenant keeps its usage rows, its last counts flushed once, and is
 * measured no more.
 */
const admin = { 'X-Api-Key': TEST_ADMIN_KEY };
const isSnapshotInsert = (command: Document) => command.insert === 'usage_snapshots';
const isGaugeInsert = (command: Document) => command.insert === 'usage_gauges';

interface GaugeDoc {
  _id: string;
  day: string;
  tenantKind: string;
  tenant: string;
  gauge: string;
  value: number;
  measuredAt: Date;
}

interface DayRow {
  day: string;
  write: number;
  read: number;
  itemsStored: number | null;
  fileBytesStored: number | null;
  measuredAt: string | null;
}

interface Tenant {
  kind: 'user' | 'team';
  id: string;
  key: Record<string, string>;
}

async function createdUser(service: ServiceProcess): Promise<Tenant> {
  const res = await service.send('POST', '/admin/users', admin, {
    email: `gauge-${Date.now()}-${Math.random()}@example.com`,
  });
  expect(res.status).toBe(200);
  const body = JSON.parse(res.body) as { apiKey: string; profile: { subject: string } };
  return { kind: 'user', id: body.profile.subject, key: { 'X-Api-Key': body.apiKey } };
}

async function createdTeam(service: ServiceProcess): Promise<Tenant> {
  const res = await service.send('POST', '/admin/teams', admin, { name: `gauge-${Date.now()}` });
  expect(res.status).toBe(200);
  const body = JSON.parse(res.body) as { apiKey: string; team: { id: string } };
  return { kind: 'team', id: body.team.id, key: { 'X-Api-Key': body.apiKey } };
}

/** Stores `count` items in `collection` (in `branch`, the default one when empty). */
async function storeItems(
  service: ServiceProcess,
  tenant: Tenant,
  collection: string,
  count: number,
  branch = '',
): Promise<void> {
  for (let i = 0; i < count; i += 1) {
    const res = await service.send(
      'POST',
      `/data/${collection}`,
      { ...tenant.key, ...(branch ? { 'X-Branch': branch } : {}) },
      { item: { n: i } },
    );
    expect(res.status).toBe(200);
  }
}

/** Uploads a file of `size` bytes; the bytes it stores. */
async function storeFile(service: ServiceProcess, tenant: Tenant, size: number): Promise<number> {
  await request(`http://127.0.0.1:${service.port}`)
    .post('/files')
    .query({ name: `f-${size}.bin` })
    .set(tenant.key)
    .set('Content-Type', 'application/octet-stream')
    .send(Buffer.alloc(size, 7))
    .expect(201);
  return size;
}

/** Every gauge written, by id. */
async function gaugesIn(client: MongoClient, dbName: string): Promise<Map<string, GaugeDoc>> {
  const docs = await client.db(dbName).collection<GaugeDoc>('usage_gauges').find({}).toArray();
  return new Map(docs.map((doc) => [doc._id, doc]));
}

async function snapshotOf(client: MongoClient, dbName: string): Promise<Document | null> {
  return client.db(dbName).collection('usage_snapshots').findOne({});
}

/** The gauges expected of each tenant on `day`, by their fixed ids. */
function expectedGauges(
  day: string,
  stored: { tenant: Tenant; items: number; fileBytes: number }[],
): Record<string, number> {
  return Object.fromEntries(
    stored.flatMap(({ tenant, items, fileBytes }) => [
      [`${day}/${tenant.kind}/${tenant.id}/itemsStored`, items],
      [`${day}/${tenant.kind}/${tenant.id}/fileBytesStored`, fileBytes],
    ]),
  );
}

const valuesOf = (gauges: Map<string, GaugeDoc>) =>
  Object.fromEntries([...gauges].map(([id, doc]) => [id, doc.value]));

describe('usage gauges (two instances, one snapshot)', () => {
  const dbName = uniqueDbName(`${__filename}-two`);
  const ENV = {
    LOG_LEVEL: 'warn',
    MONGODB_DB_NAME: dbName,
    USAGE_SNAPSHOT_HOUR: '0',
    USAGE_SNAPSHOT_POLL_MS: '100',
  };
  let instances: ProxiedInstances | undefined;
  let proxyA: WireProxy;
  let proxyB: WireProxy;
  let a: ServiceProcess;
  let b: ServiceProcess;
  let client: MongoClient;

  beforeAll(async () => {
    // Neither may record the day's snapshot before the test has stored what it measures.
    instances = await startProxiedInstances(ENV, isSnapshotInsert);
    ({ a, b, proxyA, proxyB } = instances);
    client = new MongoClient(testDatabaseUri());
  }, 180_000);

  afterAll(async () => {
    await instances?.close();
    await client?.db(dbName).dropDatabase();
    await client?.close();
  });

  it('writes exactly one value per tenant and gauge, what is stored, and shows it in the day rows', async () => {
    const ada = await createdUser(a);
    const bob = await createdUser(b);
    const crew = await createdTeam(a);
    await storeItems(a, ada, 'notes', 3);
    await storeItems(b, ada, 'tasks', 4, 'staging');
    const adaBytes = (await storeFile(a, ada, 1000)) + (await storeFile(b, ada, 234));
    await storeItems(b, crew, 'orders', 2);
    const crewBytes = await storeFile(b, crew, 77);

    // Both instances found the snapshot due and tried to record it; both go on at once.
    await until(
      'both instances tried the snapshot',
      () => proxyA.held() >= 1 && proxyB.held() >= 1,
    );
    proxyA.release();
    proxyB.release();
    await until(
      'the snapshot done',
      async () => (await snapshotOf(client, dbName))?.status === 'done',
    );

    const snapshot = await snapshotOf(client, dbName);
    const day = String(snapshot?._id);
    expect(snapshot?.runs).toBe(1);
    const gauges = await gaugesIn(client, dbName);
    expect(valuesOf(gauges)).toEqual(
      expectedGauges(day, [
        { tenant: ada, items: 7, fileBytes: adaBytes },
        { tenant: bob, items: 0, fileBytes: 0 },
        { tenant: crew, items: 2, fileBytes: crewBytes },
      ]),
    );

    // The tenant reads its day's gauges, with the time they were measured, through either instance.
    const measuredAt = gauges.get(`${day}/user/${ada.id}/itemsStored`)?.measuredAt.toISOString();
    for (const service of [a, b]) {
      const res = await service.send('GET', `/me/usage?from=${day}&to=${day}`, ada.key);
      expect(res.status).toBe(200);
      const usage = JSON.parse(res.body) as { days: DayRow[]; total: Record<string, unknown> };
      expect(usage.days[0]).toMatchObject({
        day,
        itemsStored: 7,
        fileBytesStored: adaBytes,
        measuredAt,
      });
      // Gauges are snapshots, not sums: the total has none.
      expect(usage.total).not.toHaveProperty('itemsStored');
    }

    // The operator's rows: bob made no request that was counted yet, and still has a row.
    const page = await b.send(
      'GET',
      `/admin/usage?from=${day}&to=${day}&tenant=user:${bob.id}`,
      admin,
    );
    expect(page.status).toBe(200);
    expect(JSON.parse(page.body)).toEqual([
      expect.objectContaining({
        day,
        tenant: { kind: 'user', id: bob.id },
        itemsStored: 0,
        fileBytesStored: 0,
        measuredAt: expect.any(String),
      }),
    ]);
    const exported = await a.send('GET', `/admin/usage?from=${day}&to=${day}`, {
      ...admin,
      Accept: 'application/x-ndjson',
    });
    expect(exported.status).toBe(200);
    const lines = parseLines(exported.body) as unknown as (DayRow & { tenant: { id: string } })[];
    expect(Object.fromEntries(lines.map((line) => [line.tenant.id, line.itemsStored]))).toEqual({
      [ada.id]: 7,
      [bob.id]: 0,
      [crew.id]: 2,
    });
  });
});

describe('usage gauges (the holder killed mid-snapshot)', () => {
  const dbName = uniqueDbName(`${__filename}-kill`);
  const LEASE_MS = 3000;
  const POLL_MS = 100;
  const ENV = {
    LOG_LEVEL: 'warn',
    MONGODB_DB_NAME: dbName,
    USAGE_SNAPSHOT_HOUR: '0',
    USAGE_SNAPSHOT_POLL_MS: String(POLL_MS),
    USAGE_SNAPSHOT_LEASE_MS: String(LEASE_MS),
  };
  let instances: ProxiedInstances | undefined;
  let proxyA: WireProxy;
  let proxyB: WireProxy;
  let a: ServiceProcess;
  let b: ServiceProcess;
  let client: MongoClient;

  beforeAll(async () => {
    instances = await startProxiedInstances(ENV, isSnapshotInsert);
    ({ a, b, proxyA, proxyB } = instances);
    client = new MongoClient(testDatabaseUri());
  }, 180_000);

  afterAll(async () => {
    await instances?.close();
    await client?.db(dbName).dropDatabase();
    await client?.close();
  });

  it('is taken over after the lease, and every gauge is written once, as stored', async () => {
    const ada = await createdUser(a);
    const bob = await createdUser(b);
    await storeItems(a, ada, 'notes', 5);
    const adaBytes = await storeFile(a, ada, 4321);
    await storeItems(b, bob, 'notes', 1);
    await until(
      'both instances tried the snapshot',
      () => proxyA.held() >= 1 && proxyB.held() >= 1,
    );

    // A records the snapshot and holds it; its first tenant's gauges are held on their way.
    proxyA.release();
    proxyA.hold(isGaugeInsert);
    await until("A's first gauges held", () => proxyA.held() >= 2);
    const held = await snapshotOf(client, dbName);
    expect(held).toMatchObject({ status: 'running', runs: 1 });
    await a.kill();
    const killedAt = performance.now();

    // B finds it held, and takes it over once the lease has run out.
    proxyB.release();
    await until(
      'the snapshot taken over and done',
      async () => (await snapshotOf(client, dbName))?.status === 'done',
      LEASE_MS + 20 * POLL_MS + 5_000,
    );
    const waited = performance.now() - killedAt;
    const snapshot = await snapshotOf(client, dbName);
    expect(snapshot?.runs).toBe(2);
    // Not before the lease A took had run out.
    expect((snapshot?.leaseUntil as Date).getTime()).toBeGreaterThan(
      (held?.leaseUntil as Date).getTime(),
    );
    expect(waited).toBeLessThan(LEASE_MS + 20 * POLL_MS + 5_000);
    const day = String(snapshot?._id);
    expect(valuesOf(await gaugesIn(client, dbName))).toEqual(
      expectedGauges(day, [
        { tenant: ada, items: 5, fileBytes: adaBytes },
        { tenant: bob, items: 1, fileBytes: 0 },
      ]),
    );
    // What A measured never reached the database.
    expect(proxyA.heldCommands().filter(isGaugeInsert)).toHaveLength(1);
  });
});

describe('usage rows of an erased tenant', () => {
  let t: TestApp;

  beforeAll(async () => {
    // Flushed and measured only when the test says so.
    t = await createTestApp(__filename, {
      USAGE_ENABLED: 'true',
      USAGE_FLUSH_MS: '3600000',
      USAGE_SNAPSHOT_HOUR: '0',
      USAGE_SNAPSHOT_POLL_MS: '3600000',
      LIFECYCLE_POLL_MS: '50',
    });
  });
  afterAll(async () => t?.close());

  async function rowsOf(subject: string): Promise<DayRow[]> {
    const res = await t
      .http()
      .get('/admin/usage')
      .query({ tenant: `user:${subject}` })
      .set(admin);
    expect(res.status).toBe(200);
    return res.body as DayRow[];
  }

  it('keeps them, flushes the counts not yet written once, and measures the tenant no more', async () => {
    const ada = await createUser(t);
    const bob = await createUser(t);
    for (let i = 0; i < 2; i += 1)
      await t
        .http()
        .post('/data/notes')
        .set('X-Api-Key', ada.apiKey)
        .send({ item: { i } })
        .expect(200);
    await t.http().get('/data/notes').set('X-Api-Key', ada.apiKey).expect(200);
    await t.http().post('/data/notes').set('X-Api-Key', bob.apiKey).send({ item: {} }).expect(200);

    // Erased before any of its counts were written.
    const erasure = await t.http().delete(`/admin/users/${ada.subject}`).set(admin).expect(202);
    await until('the erasure done', async () => {
      const res = await t.http().get(`/admin/erasures/${erasure.body.id}`).set(admin).expect(200);
      return (res.body as { status: string }).status === 'done';
    });
    await t.app.get(UsageFlusher).flush();
    await t.app.get(UsageSnapshots).takeNow();

    const [row] = await rowsOf(ada.subject);
    expect(row).toMatchObject({ write: 2, read: 1, itemsStored: null, fileBytesStored: null });
    const gauges = await t.connection.collection('usage_gauges').find({}).toArray();
    expect(gauges.map((doc) => [doc.tenant, doc.gauge, doc.value]).sort()).toEqual([
      [bob.subject, 'fileBytesStored', 0],
      [bob.subject, 'itemsStored', 1],
    ]);
    expect((await rowsOf(bob.subject))[0]).toMatchObject({ write: 1, itemsStored: 1 });

    // Flushed once: a later flush and snapshot change nothing.
    await t.app.get(UsageFlusher).flush();
    await t.app.get(UsageSnapshots).takeNow();
    expect(await rowsOf(ada.subject)).toEqual([row]);
  });
});
