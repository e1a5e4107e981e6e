import { MongoClient } from 'mongodb';
import { testDatabaseUri, TEST_ADMIN_KEY, uniqueDbName } from '../support/app';
import { tenantDatabaseName } from '../../src/placement';
import { documentsNaming } from '../support/database-scan';
import { startService, type ServiceProcess } from '../support/service-process';
import { startWireProxy, type WireProxy } from '../support/wire-proxy';

/**
 * An erasure survives the death of the process that runs it: the service erases a user with 30
 * collections through a proxy that lets the first collection's drop go and holds the second's
 * (its tombstone insert), is SIGKILLed there — part-way on every run, not wherever the scheduler
 * happened to be — started again on the same database, and the erasure ends with no document
 * naming the user.
 */
const COLLECTIONS = 30;
const ENV = { LIFECYCLE_POLL_MS: '100', ERASURE_LEASE_MS: '1000', LOG_LEVEL: 'warn' };
const admin = { 'X-Api-Key': TEST_ADMIN_KEY };
let service: ServiceProcess | undefined;
let proxy: WireProxy | undefined;

afterAll(async () => {
  await service?.kill();
  await proxy?.close();
});

interface ErasureBody {
  id: string;
  status: string;
  stepsDone: string[];
  collectionsDropped: number;
  runs: number;
}

it('finishes after a SIGKILL part-way, once the service is back', async () => {
  const dbName = uniqueDbName(__filename);
  proxy = await startWireProxy(testDatabaseUri());
  service = await startService({ ...ENV, MONGODB_DB_NAME: dbName, MONGODB_URI: proxy.uri });
  const subject = 'resume-erasure-subject-7f3a';
  const created = await service.send('POST', '/admin/users', admin, {
    email: 'resume@example.com',
    subject,
  });
  expect(created.status).toBe(200);
  const key = { 'X-Api-Key': (JSON.parse(created.body) as { apiKey: string }).apiKey };
  for (let c = 0; c < COLLECTIONS; c += 1) {
    for (let i = 0; i < 3; i += 1) {
      const res = await service.send('POST', `/data/c${c}`, key, { item: { owner: subject, i } });
      expect(res.status).toBe(200);
    }
  }

  // A collection's drop starts with its tombstone: the first one goes, the next ones are held.
  let tombstones = 0;
  proxy.hold(
    (command) =>
      command.insert === 'data_collection_drops' && command.$db === dbName && ++tombstones > 1,
  );
  const started = await service.send('DELETE', `/admin/users/${subject}`, admin);
  expect(started.status).toBe(202);
  const { id } = JSON.parse(started.body) as ErasureBody;
  let atKill: ErasureBody | undefined;
  const deadline = Date.now() + 20_000;
  while (!atKill || proxy.held() === 0) {
    if (Date.now() > deadline) throw new Error('the erasure did not reach its second collection');
    const progress = JSON.parse((await service.send('GET', `/admin/erasures/${id}`, admin)).body);
    if ((progress as ErasureBody).collectionsDropped >= 1) atKill = progress as ErasureBody;
    await new Promise((r) => setTimeout(r, 50));
  }
  await service.kill();
  expect(atKill.status).toBe('running');
  expect(atKill.collectionsDropped).toBe(1);

  // What the killed process left: the erasure unfinished, the user still partly there.
  const client = await MongoClient.connect(testDatabaseUri());
  try {
    const db = client.db(dbName);
    const left = await db.collection('data_collections').countDocuments({ tenant: subject });
    expect(left).toBe(COLLECTIONS - 1);

    service = await startService({ ...ENV, MONGODB_DB_NAME: dbName });
    let end: ErasureBody | undefined;
    for (let i = 0; i < 300 && !end; i += 1) {
      const res = JSON.parse((await service.send('GET', `/admin/erasures/${id}`, admin)).body);
      if ((res as ErasureBody).status === 'done') end = res as ErasureBody;
      else await new Promise((r) => setTimeout(r, 100));
    }
    expect(end).toBeDefined();
    expect(end?.runs).toBeGreaterThanOrEqual(2);
    expect(end?.stepsDone).toEqual([
      'keys',
      'memberships',
      'projects',
      'collections',
      'files',
      'owner',
    ]);
    // The user's collections were in its own database (the default cluster is this server).
    const tenantDb = client.db(tenantDatabaseName(dbName, { kind: 'user', id: subject }));
    expect(await documentsNaming([db, tenantDb], subject)).toEqual([]);
    // No collection is registered any more, and a native one left over is a tombstone's.
    expect(await db.collection('data_collections').countDocuments()).toBe(0);
    const native = (await tenantDb.listCollections({}, { nameOnly: true }).toArray())
      .map((c) => c.name)
      .filter((name) => name.startsWith('d_'));
    const tombstoned = (await db.collection('data_collection_drops').find().toArray()).map(
      (d) => d.physical as string,
    );
    expect(native.filter((name) => !tombstoned.includes(name))).toEqual([]);
  } finally {
    await client.close();
  }
});
