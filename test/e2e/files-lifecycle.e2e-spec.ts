import { randomBytes } from 'node:crypto';
import { request as httpRequest, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { MongoClient, ObjectId, type Db } from 'mongodb';
import type { Response } from 'superagent';
import { tenantDatabaseName } from '../../src/placement';
import {
  createTestApp,
  testDatabaseUri,
  TEST_ADMIN_KEY,
  uniqueDbName,
  type TestApp,
} from '../support/app';
import { createSubKey, createUser, type TestUser } from '../support/factories';
import { as } from '../support/http';
import { exportAs } from '../support/ndjson';
import { startOwnDatabase, type OwnDatabase } from '../support/own-database';
import { until } from '../support/until';

/**
 * Files through the end of things: an erasure removes a tenant's files and nobody else's, a
 * tenant move takes them (and an upload still running) to the new cluster and leaves nothing
 * behind, and the account export lists them.
 */
const admin = { 'X-Api-Key': TEST_ADMIN_KEY };
const POLL_MS = 100;
const dbName = uniqueDbName(__filename);

let clusterB: OwnDatabase;
let t: TestApp;
let clientA: MongoClient;
let clientB: MongoClient;
let port: number;
let env: Record<string, string>;

beforeAll(async () => {
  clusterB = await startOwnDatabase('files-b');
  const clusters = {
    a: { uri: testDatabaseUri(), region: 'eu' },
    b: { uri: clusterB.uri, region: 'us' },
  };
  env = {
    MONGODB_DB_NAME: dbName,
    DATA_CLUSTERS: JSON.stringify(clusters),
    REGISTRY_CACHE_MS: '200',
    COLLECTION_DROP_GRACE_MS: '1000',
    LIFECYCLE_POLL_MS: String(POLL_MS),
    MOVE_LEASE_MS: '3000',
    MOVE_MAX_WRITE_PAUSE_MS: '1000',
    ERASURE_LEASE_MS: '1000',
    FILE_QUOTA_BYTES: String(16 * 1024 * 1024),
  };
  t = await createTestApp(__filename, env);
  const server = t.app.getHttpServer() as Server;
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  port = (server.address() as AddressInfo).port;
  clientA = await MongoClient.connect(testDatabaseUri());
  clientB = await MongoClient.connect(clusterB.uri);
});

afterAll(async () => {
  await clientA?.close();
  await clientB?.close();
  await t?.close();
  await clusterB?.stop();
});

/** Binary bodies as supertest hands them over: a Buffer of the response bytes. */
function bytesParser(res: Response, done: (error: Error | null, body: Buffer) => void): void {
  const chunks: Buffer[] = [];
  const stream = res as unknown as NodeJS.ReadableStream;
  stream.on('data', (chunk: Buffer) => chunks.push(chunk));
  stream.on('end', () => done(null, Buffer.concat(chunks)));
}

interface FileBody {
  id: string;
  name: string;
  size: number;
  contentType: string;
  sha256: string;
  createdAt: string;
  owner: string;
}

async function upload(key: { apiKey: string }, bytes: Buffer, name: string, branch = '') {
  const res = await t
    .http()
    .post('/files')
    .query({ name })
    .set({ 'X-Api-Key': key.apiKey, 'X-Branch': branch })
    .set('Content-Type', 'application/octet-stream')
    .send(bytes)
    .expect(201);
  return res.body as FileBody;
}

async function download(key: { apiKey: string }, id: string, branch = ''): Promise<Buffer> {
  const res = await t
    .http()
    .get(`/files/${id}/content`)
    .set({ 'X-Api-Key': key.apiKey, 'X-Branch': branch })
    .buffer(true)
    .parse(bytesParser)
    .expect(200);
  return res.body as Buffer;
}

async function usedBytes(user: TestUser): Promise<number> {
  const me = await as(t, user).get('/me').expect(200);
  return (me.body as { quota: { files: { used: number } } }).quota.files.used;
}

/** The tenant database of a user on a cluster's server. */
function tenantDb(client: MongoClient, user: TestUser): Db {
  return client.db(tenantDatabaseName(dbName, { kind: 'user', id: user.subject }));
}

async function gridFsCounts(db: Db): Promise<{ files: number; chunks: number }> {
  return {
    files: await db.collection('files.files').countDocuments({}),
    chunks: await db.collection('files.chunks').countDocuments({}),
  };
}

const fileRecords = () => t.connection.db!.collection('file_records');
const ledger = () => t.connection.db!.collection('file_quota_ledger');

/**
 * An upload whose body arrives in two parts (chunked, no Content-Length): the first now, the
 * rest when `finish` is called; `response` settles with the answer.
 */
function uploadInTwoParts(key: { apiKey: string }, name: string, first: Buffer) {
  let finish: (rest: Buffer) => void = () => undefined;
  const response = new Promise<{ status: number; body: FileBody }>((resolve, reject) => {
    const req = httpRequest(
      {
        host: '127.0.0.1',
        port,
        method: 'POST',
        path: `/files?name=${encodeURIComponent(name)}`,
        headers: { 'X-Api-Key': key.apiKey, 'Content-Type': 'application/octet-stream' },
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (chunk: Buffer) => chunks.push(chunk));
        res.on('end', () =>
          resolve({
            status: res.statusCode ?? 0,
            body: JSON.parse(Buffer.concat(chunks).toString('utf8')) as FileBody,
          }),
        );
        res.on('error', reject);
      },
    );
    req.on('error', reject);
    req.write(first);
    finish = (rest) => req.end(rest);
  });
  return { response, finish: (rest: Buffer) => finish(rest) };
}

interface ErasureBody {
  status: string;
  stepsDone: string[];
}

describe('erasing an account', () => {
  it('removes its file records, bytes and quota ledger, and leaves another tenant’s files', async () => {
    const gone = await createUser(t, { region: 'eu' });
    const sub = await createSubKey(t, gone, { clientId: 'web', accountId: 'acct-gone' });
    const stays = await createUser(t, { region: 'eu' });
    await upload(gone, randomBytes(600_000), 'big.bin');
    await upload(gone, randomBytes(1000), 'staged.bin', 'staging');
    await upload(sub, randomBytes(2000), 'sub.bin');
    const kept = randomBytes(300_000);
    const keptFile = await upload(stays, kept, 'kept.bin');
    const keptUsed = await usedBytes(stays);
    expect(await fileRecords().countDocuments({ tenant: gone.subject })).toBe(3);
    expect((await gridFsCounts(tenantDb(clientA, gone))).chunks).toBeGreaterThanOrEqual(4);
    expect(await ledger().countDocuments({ tenant: gone.subject })).toBeGreaterThan(0);

    const started = await t.http().delete(`/admin/users/${gone.subject}`).set(admin).expect(202);
    const id = (started.body as { id: string }).id;
    let erasure: ErasureBody | undefined;
    await until('the erasure is done', async () => {
      erasure = (await t.http().get(`/admin/erasures/${id}`).set(admin).expect(200))
        .body as ErasureBody;
      return erasure.status === 'done';
    });
    expect(erasure?.stepsDone).toContain('files');

    expect(await fileRecords().countDocuments({ tenant: gone.subject })).toBe(0);
    expect(await gridFsCounts(tenantDb(clientA, gone))).toEqual({ files: 0, chunks: 0 });
    expect(await ledger().countDocuments({ tenant: gone.subject })).toBe(0);

    // The other tenant's file is whole, and its quota untouched.
    expect(Buffer.compare(await download(stays, keptFile.id), kept)).toBe(0);
    expect(await usedBytes(stays)).toBe(keptUsed);
    expect(await fileRecords().countDocuments({ tenant: stays.subject })).toBe(1);
  });
});

interface MoveBody {
  id: string;
  status: string;
  filesCopied: number;
  runs: number;
}

interface MoveDocument {
  phase: string;
  filesCopied: number;
  runs: number;
}

async function moveDoc(id: string): Promise<MoveDocument | null> {
  return t.connection
    .db!.collection<MoveDocument>('tenant_moves')
    .findOne({ _id: new ObjectId(id) } as object);
}

async function finished(id: string): Promise<MoveBody> {
  let move: MoveBody | undefined;
  await until(
    `move ${id} ends`,
    async () => {
      move = (await t.http().get(`/admin/moves/${id}`).set(admin).expect(200)).body as MoveBody;
      return move.status !== 'running';
    },
    30_000,
  );
  return move as MoveBody;
}

/** The stored files of a user at their original sizes, keyed by id, and their branches. */
type Contents = Map<string, { bytes: Buffer; branch: string }>;

async function uploadSome(user: TestUser, sizes: [number, string][]): Promise<Contents> {
  const contents: Contents = new Map();
  for (const [size, branch] of sizes) {
    const bytes = randomBytes(size);
    const file = await upload(user, bytes, `f${size}.bin`, branch);
    contents.set(file.id, { bytes, branch });
  }
  return contents;
}

/** Every file reads byte-exact, its record and its bytes are on `b`, nothing is left on `a`. */
async function expectAllOnB(user: TestUser, contents: Contents): Promise<void> {
  for (const [id, { bytes, branch }] of contents) {
    expect(Buffer.compare(await download(user, id, branch), bytes)).toBe(0);
  }
  const records = await fileRecords().find({ tenant: user.subject }).toArray();
  expect(records.map((r) => [r.state, r.cluster])).toEqual(
    Array.from({ length: contents.size }, () => ['stored', 'b']),
  );
  expect((await gridFsCounts(tenantDb(clientB, user))).files).toBe(contents.size);
  expect(await gridFsCounts(tenantDb(clientA, user))).toEqual({ files: 0, chunks: 0 });
}

describe('moving a tenant', () => {
  it('takes every file, and an upload still running, to the new cluster; nothing stays behind', async () => {
    const user = await createUser(t, { region: 'eu' });
    const contents = await uploadSome(user, [
      [700_000, ''],
      [1_000, ''],
      [300_000, 'staging'],
    ]);
    // A file deleted before the move leaves nothing to move.
    const deleted = await upload(user, randomBytes(5000), 'deleted.bin');
    await as(t, user).delete(`/files/${deleted.id}`).expect(204);

    const usedStored = await usedBytes(user);
    // An upload that began at the old location and goes on during the move.
    const first = randomBytes(400_000);
    const rest = randomBytes(200_000);
    const running = uploadInTwoParts(user, 'running.bin', first);
    await until('the running upload is recorded', async () => {
      const record = await fileRecords().findOne({ tenant: user.subject, state: 'uploading' });
      return record?.cluster === 'a';
    });
    expect((await gridFsCounts(tenantDb(clientA, user))).chunks).toBeGreaterThanOrEqual(5);

    const started = await t
      .http()
      .post(`/admin/tenants/user/${user.subject}/move`)
      .set(admin)
      .send({ cluster: 'b' })
      .expect(202);
    const moveId = (started.body as MoveBody).id;

    // The stored files are moved, and the move waits for the running upload.
    await until(
      'the stored files are moved',
      async () => (await moveDoc(moveId))?.filesCopied === 3,
    );
    await new Promise((resolve) => setTimeout(resolve, 4 * POLL_MS));
    expect(await moveDoc(moveId)).toMatchObject({ phase: 'copying', filesCopied: 3 });

    running.finish(rest);
    const stored = await running.response;
    expect(stored.status).toBe(201);
    contents.set(stored.body.id, { bytes: Buffer.concat([first, rest]), branch: '' });

    expect(await finished(moveId)).toMatchObject({ status: 'done', filesCopied: 4 });
    await expectAllOnB(user, contents);

    // The quota counts what it counted, and the finished upload.
    expect(await usedBytes(user)).toBe(usedStored + first.length + rest.length);
    expect(await usedBytes(user)).toBe(
      [...contents.values()].reduce((sum, c) => sum + c.bytes.length, 0),
    );
  });

  it('loses and doubles nothing when the instance running it stops halfway and another resumes', async () => {
    const user = await createUser(t, { region: 'eu' });
    const contents = await uploadSome(user, [
      [600_000, ''],
      [2_000, 'staging'],
    ]);
    const first = randomBytes(300_000);
    const rest = randomBytes(100_000);
    // Held open through `t`, which stays up, so the upload outlives the stopping instance.
    const running = uploadInTwoParts(user, 'running.bin', first);
    await until('the running upload is recorded', async () =>
      Boolean(await fileRecords().findOne({ tenant: user.subject, state: 'uploading' })),
    );

    const stopping = await createTestApp(__filename, env);
    let moveId: string;
    try {
      const started = await stopping
        .http()
        .post(`/admin/tenants/user/${user.subject}/move`)
        .set(admin)
        .send({ cluster: 'b' })
        .expect(202);
      moveId = (started.body as MoveBody).id;
      await until('the stored files are moved', async () => {
        return (await moveDoc(moveId))?.filesCopied === 2;
      });
    } finally {
      // Stops between two steps, its lease left to run out.
      await stopping.app.close();
    }
    await until('another instance resumes the move', async () => {
      return ((await moveDoc(moveId))?.runs ?? 0) >= 2;
    });
    running.finish(rest);
    const stored = await running.response;
    expect(stored.status).toBe(201);
    contents.set(stored.body.id, { bytes: Buffer.concat([first, rest]), branch: '' });

    // The resumed run moved only the file that was left: nothing was copied twice.
    const move = await finished(moveId);
    expect(move).toMatchObject({ status: 'done', filesCopied: 3 });
    expect(move.runs).toBeGreaterThanOrEqual(2);
    await expectAllOnB(user, contents);
    expect(await usedBytes(user)).toBe(
      [...contents.values()].reduce((sum, c) => sum + c.bytes.length, 0),
    );
  });
});

describe('the account export', () => {
  it('lists the files of every branch with their metadata, not their bytes', async () => {
    const user = await createUser(t, { region: 'eu' });
    const sub = await createSubKey(t, user, { clientId: 'web', accountId: 'acct-export' });
    const own = await upload(user, randomBytes(2000), 'own.bin');
    const subs = await upload(sub, randomBytes(3000), 'sub.bin');
    const staged = await upload(user, randomBytes(4000), 'staged.bin', 'staging');

    const res = await exportAs(t, user, {}, { path: '/me/export' });
    expect(res.status).toBe(200);
    const files = res.lines.filter((line) => line.type === 'fileMetadata');
    expect(files).toEqual([
      { type: 'fileMetadata', branch: '', file: own },
      { type: 'fileMetadata', branch: '', file: subs },
      { type: 'fileMetadata', branch: 'staging', file: staged },
    ]);
    const manifest = res.lines[0] as { branches: { branch: string }[] };
    expect(manifest.branches.map((b) => b.branch)).toEqual(['', 'staging']);
    expect(subs.owner).toBe('acct-export');

    const operator = await exportAs(
      t,
      TEST_ADMIN_KEY,
      {},
      { path: `/admin/users/${user.subject}/export` },
    );
    expect(operator.lines.filter((line) => line.type === 'fileMetadata')).toEqual(files);
  });
});
