import { MongoClient } from 'mongodb';
import { testDatabaseUri, TEST_ADMIN_KEY, uniqueDbName } from '../support/app';
import { documentsNaming } from '../support/database-scan';
import { startService, type ServiceProcess } from '../support/service-process';

/**
 * An erasure survives the death of the process that runs it: the service is SIGKILLed while it
 * erases a user with 30 collections, started again on the same database, and the erasure ends
 * with no document naming the user.
 */
const COLLECTIONS = 30;
const ENV = { LIFECYCLE_POLL_MS: '100', ERASURE_LEASE_MS: '1000', LOG_LEVEL: 'warn' };
const admin = { 'X-Api-Key': TEST_ADMIN_KEY };
let service: ServiceProcess | undefined;

afterAll(async () => {
  await service?.kill();
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
  service = await startService({ ...ENV, MONGODB_DB_NAME: dbName });
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

  const started = await service.send('DELETE', `/admin/users/${subject}`, admin);
  expect(started.status).toBe(202);
  const { id } = JSON.parse(started.body) as ErasureBody;
  // Killed once some collections are gone and others are not.
  let atKill: ErasureBody | undefined;
  for (let i = 0; i < 2000 && !atKill; i += 1) {
    const progress = JSON.parse((await service.send('GET', `/admin/erasures/${id}`, admin)).body);
    if ((progress as ErasureBody).collectionsDropped >= 1) atKill = progress as ErasureBody;
  }
  await service.kill();
  expect(atKill?.status).toBe('running');
  expect(atKill?.collectionsDropped).toBeLessThan(COLLECTIONS);

  // What the killed process left: the erasure unfinished, the user still partly there.
  const client = await MongoClient.connect(testDatabaseUri());
  try {
    const db = client.db(dbName);
    const left = await db.collection('data_collections').countDocuments({ tenant: subject });
    expect(left).toBeGreaterThan(0);

    service = await startService({ ...ENV, MONGODB_DB_NAME: dbName });
    let end: ErasureBody | undefined;
    for (let i = 0; i < 300 && !end; i += 1) {
      const res = JSON.parse((await service.send('GET', `/admin/erasures/${id}`, admin)).body);
      if ((res as ErasureBody).status === 'done') end = res as ErasureBody;
      else await new Promise((r) => setTimeout(r, 100));
    }
    expect(end).toBeDefined();
    expect(end?.runs).toBeGreaterThanOrEqual(2);
    expect(end?.stepsDone).toEqual(['keys', 'memberships', 'projects', 'collections', 'owner']);
    expect(await documentsNaming(db, subject)).toEqual([]);
    // No collection is registered any more, and a native one left over is a tombstone's.
    expect(await db.collection('data_collections').countDocuments()).toBe(0);
    const native = (await db.listCollections({}, { nameOnly: true }).toArray())
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
