import { MongoClient, type Document } from 'mongodb';
import { tenantDatabaseName } from '../../src/placement';
import { testDatabaseUri, TEST_ADMIN_KEY, uniqueDbName } from '../support/app';
import { startOwnDatabase, type OwnDatabase } from '../support/own-database';
import { startService, type Reply, type ServiceProcess } from '../support/service-process';
import { SseClient } from '../support/sse';
import { until } from '../support/until';
import { startWireProxy, type WireProxy } from '../support/wire-proxy';

/**
 * A tenant moved under load, by an instance that dies part-way: 8 writers create items through
 * two service processes while an SSE reader follows the tenant's feed. The instance that runs the
 * move reaches the main database through a proxy that holds the move's first look at the writes
 * under way — taken right after it paused a collection's writes — and is SIGKILLed there, on
 * every run at the same step. The other instance takes the move over once its lease has run out
 * and finishes it. Then every acknowledged write is on the target exactly once, nothing of the
 * tenant is on the source, the feed holds every change once and in order, and uniqueField and
 * the collection quota are exact.
 */
const WRITERS = 8;
const ENV = {
  REGISTRY_CACHE_MS: '300',
  COLLECTION_DROP_GRACE_MS: '1500',
  LIFECYCLE_POLL_MS: '200',
  // The default pause bound: on a loaded machine the feed's last copy under 8 writers can take
  // more than a second, and this test is about the takeover, not about the bound (which
  // tenant-move-failure holds every attempt past). The lease must exceed it.
  MOVE_LEASE_MS: '6000',
  MOVE_MAX_WRITE_PAUSE_MS: '5000',
  EVENTS_POLL_MS: '100',
  // A write that died with the mover after its change, before its event, gets its event from
  // the reconciler once its intent is this old.
  EVENTS_SWEEP_MS: '200',
  EVENTS_INTENT_GRACE_MS: '1500',
  LOG_LEVEL: 'warn',
};
const admin = { 'X-Api-Key': TEST_ADMIN_KEY };
const dbName = uniqueDbName(__filename);

let clusterB: OwnDatabase | undefined;
let proxy: WireProxy | undefined;
let mover: ServiceProcess | undefined;
let other: ServiceProcess | undefined;
let reader: SseClient | undefined;

afterAll(async () => {
  reader?.close();
  proxy?.release();
  await Promise.all([mover?.kill(), other?.kill()]);
  await proxy?.close();
  const client = await MongoClient.connect(testDatabaseUri());
  await client
    .db(dbName)
    .dropDatabase()
    .catch(() => undefined);
  await client.close();
  await clusterB?.stop();
});

interface Acked {
  writer: number;
  n: number;
  id: string;
  collection: string;
}

const json = <T>(reply: Reply): T => JSON.parse(reply.body) as T;

it('moves a tenant under load; a SIGKILL of the mover leaves the move to the other instance', async () => {
  clusterB = await startOwnDatabase('move-load-b');
  proxy = await startWireProxy(testDatabaseUri());
  const clusters = (main: string) =>
    JSON.stringify({ a: { uri: main, region: 'eu' }, b: { uri: clusterB?.uri, region: 'us' } });
  const env = { ...ENV, MONGODB_DB_NAME: dbName };
  [mover, other] = await Promise.all([
    startService({ ...env, MONGODB_URI: proxy.uri, DATA_CLUSTERS: clusters(proxy.uri) }),
    startService({ ...env, DATA_CLUSTERS: clusters(testDatabaseUri()) }),
  ]);
  const created = await other.send('POST', '/admin/users', admin, {
    email: 'moved@example.com',
    region: 'eu',
  });
  expect(created.status).toBe(200);
  const { apiKey, profile } = json<{ apiKey: string; profile: { subject: string } }>(created);
  const key = { 'X-Api-Key': apiKey };
  const database = tenantDatabaseName(dbName, { kind: 'user', id: profile.subject });

  // The feed from its start, on the instance that lives.
  reader = await SseClient.open(other.port, '/events/stream?after=0', key);
  expect(reader.status).toBe(200);

  // Writers: each its own items, through both instances; a write counts once it is answered.
  const acked: Acked[] = [];
  const paused: Reply[] = [];
  let writing = true;
  let moverAlive = true;
  const writer = async (w: number): Promise<void> => {
    const collection = w % 2 === 0 ? 'orders' : 'logs';
    for (let n = 0; writing; n += 1) {
      const via = (n + w) % 2 === 0 && moverAlive ? mover : other;
      for (;;) {
        const reply = await via
          ?.send('POST', `/data/${collection}`, key, {
            item: { w, n, code: `w${w}-${n}` },
            uniqueField: 'code',
          })
          .catch(() => undefined);
        if (reply?.status === 200) {
          acked.push({ writer: w, n, id: json<{ _id: string }>(reply)._id, collection });
          break;
        }
        if (reply?.status === 503) paused.push(reply);
        // A refused write (paused) is tried again; one whose instance died goes to the other.
        if (reply === undefined && via === mover) break;
        if (!writing) break;
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
    }
  };
  const writers = Array.from({ length: WRITERS }, (_, w) => writer(w));
  await until('both collections exist', () => acked.length >= 20);

  // The mover pauses a collection, then looks for writes under way: held there, it is killed.
  let looks = 0;
  proxy.hold(
    (command: Document) =>
      command.find === 'move_writes' && command.$db === dbName && ++looks === 1,
  );
  const started = await mover.send('POST', `/admin/tenants/user/${profile.subject}/move`, admin, {
    cluster: 'b',
  });
  expect(started.status).toBe(202);
  const moveId = json<{ id: string }>(started).id;
  await until('the mover is held in a pause', () => (proxy?.held() ?? 0) > 0, 30_000);
  moverAlive = false;
  await mover.kill();
  proxy.release();

  // The other instance takes the move over and finishes it, the writers going on.
  let move: { status: string; runs: number; collections: number; collectionsCopied: number };
  await until(
    'the move ends on the other instance',
    async () => {
      move = json(await (other as ServiceProcess).send('GET', `/admin/moves/${moveId}`, admin));
      return move.status !== 'running';
    },
    60_000,
  );
  const afterMove = acked.length;
  await until('writes go on after the move', () => acked.length >= afterMove + 16);
  writing = false;
  await Promise.all(writers);
  // (error is named so that a failed move shows why.)
  expect({ error: null, ...move! }).toMatchObject({
    status: 'done',
    error: null,
    collections: 2,
    collectionsCopied: 2,
  });
  expect(move!.runs).toBeGreaterThanOrEqual(2);

  // Every acknowledged write is on the target once; no write was applied twice; the source has
  // nothing of the tenant.
  const [onA, onB] = await Promise.all([
    MongoClient.connect(testDatabaseUri()),
    MongoClient.connect(clusterB.uri),
  ]);
  try {
    const names = await onA.db().admin().listDatabases({ nameOnly: true });
    expect(names.databases.map((d) => d.name)).not.toContain(database);
    // Nor its feed, deliveries or stored responses in the source's cluster database (the main
    // one: a is the main deployment); they are in b's.
    const ofTenant = { tenantKind: 'user', tenant: profile.subject };
    for (const name of ['events', 'event_intents', 'webhook_deliveries', 'idempotency_records']) {
      expect(await onA.db(dbName).collection(name).countDocuments(ofTenant)).toBe(0);
    }
    expect(await onB.db(dbName).collection('events').countDocuments(ofTenant)).toBeGreaterThan(0);
    const placement = await onA
      .db(dbName)
      .collection('tenant_placements')
      .findOne({ _id: database as never });
    expect(placement).toMatchObject({ cluster: 'b', feed: 'b' });
    expect(placement?.feedMoving).toBeUndefined();
    const entries = await onA
      .db(dbName)
      .collection('data_collections')
      .find({ tenant: profile.subject })
      .toArray();
    expect(entries.map((e) => [e.name, e.cluster, e.moving]).sort()).toEqual([
      ['logs', 'b', undefined],
      ['orders', 'b', undefined],
    ]);
    const stored = new Map<string, Document>();
    const writes = new Set<string>();
    for (const entry of entries) {
      for (const doc of await onB.db(database).collection(entry.physical).find().toArray()) {
        stored.set(String(doc._id), doc);
        const write = `${doc.w}/${doc.n}`;
        expect(writes.has(write)).toBe(false);
        writes.add(write);
      }
    }
    for (const write of acked)
      expect(stored.get(write.id)).toMatchObject({ w: write.writer, n: write.n });
    // Claims: every stored item's value is claimed on the target. A claim of no stored item can
    // only be of a write that died with the mover between its claim and its insert (it is never
    // acknowledged, and its claim expires after the claim grace).
    const orders = entries.find((e) => e.name === 'orders') as Document;
    const claimed = new Set(
      (
        await onB
          .db(database)
          .collection('data_unique_claims')
          .find({ physical: orders.physical })
          .toArray()
      ).map((claim) => String(claim.itemId)),
    );
    const ordersStored = await onB.db(database).collection(orders.physical).find().toArray();
    for (const doc of ordersStored) expect(claimed.has(String(doc._id))).toBe(true);
    const ackedIds = new Set(acked.map((a) => a.id));
    const unstored = [...claimed].filter((id) => !stored.has(id));
    for (const id of unstored) expect(ackedIds.has(id)).toBe(false);

    // The feed: every stored item's creation once (a write that died with the mover through
    // the reconciler), each writer's acknowledged ones in the order written.
    await until('the feed has every stored item', () => {
      const keys = new Set(reader?.events.map((e) => (JSON.parse(e.data) as { key: string }).key));
      return [...stored.keys()].every((id) => keys.has(id));
    });
    const events = (reader?.events ?? []).map((e) => ({
      seq: Number(e.id),
      ...(JSON.parse(e.data) as { key: string; type: string; resource: string }),
    }));
    const seqs = events.map((e) => e.seq);
    expect(seqs).toEqual([...seqs].sort((x, y) => x - y));
    expect(new Set(seqs).size).toBe(seqs.length);
    const itemKeys = events.filter((e) => e.resource === 'item').map((e) => e.key);
    expect(new Set(itemKeys).size).toBe(itemKeys.length);
    expect(itemKeys.length).toBe(stored.size);
    for (let w = 0; w < WRITERS; w += 1) {
      const mine = acked.filter((a) => a.writer === w).map((a) => a.id);
      const order = itemKeys.filter((k) => mine.includes(k));
      expect(order).toEqual(mine);
    }
  } finally {
    await Promise.all([onA.close(), onB.close()]);
  }

  // uniqueField still refuses a taken value; the quota counts the two collections.
  const taken = await other.send('POST', '/data/orders', key, {
    item: { code: 'w0-0' },
    uniqueField: 'code',
  });
  expect(taken.status).toBe(409);
  const me = json<{ quota: { collections: { used: number } } }>(
    await other.send('GET', '/me', key),
  );
  expect(me.quota.collections.used).toBe(2);
  // The collection the dead mover left paused refused writes until the other instance took the
  // move over (a lease later) with 503 COLLECTION_MOVING; the feed's pause, with FEED_MOVING.
  // Each with Retry-After, and a retry of the same value went through (the writers' loop).
  const codes = paused.map((reply) => json<{ code: string }>(reply).code);
  expect(codes).toContain('COLLECTION_MOVING');
  expect(codes.filter((code) => code !== 'COLLECTION_MOVING' && code !== 'FEED_MOVING')).toEqual(
    [],
  );
  for (const reply of paused) expect(reply.headers['retry-after']).toBe('1');
});
