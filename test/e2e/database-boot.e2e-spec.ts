import { spawn } from 'node:child_process';
import { MongoClient } from 'mongodb';
import { findFreePort } from '../../tools/dev-database';
import { TEST_ADMIN_KEY, uniqueDbName } from '../support/app';
import { startOwnDatabase, type OwnDatabase } from '../support/own-database';
import { ensureBuilt, MAIN, startService, type ServiceProcess } from '../support/service-process';
import { startWireProxy } from '../support/wire-proxy';

/**
 * Which database a start uses, and how a start waits for it: the service as it runs in
 * production (`node dist/main.js`) against a database server of this file's own, which the tests
 * freeze and fill with an older deployment's data.
 */
describe('database at boot', () => {
  let database: OwnDatabase;
  let client: MongoClient;
  const services: ServiceProcess[] = [];

  beforeAll(async () => {
    database = await startOwnDatabase('boot');
    client = await new MongoClient(database.uri).connect();
    ensureBuilt();
  });

  afterAll(async () => {
    database?.thaw();
    await Promise.all(services.map((s) => s.kill()));
    await client?.close();
    await database?.stop();
  });

  /** `database.uri` with a database in its path (the resolver's URI ends in `/`). */
  const uriNaming = (name: string) => `${database.uri}${name}`;

  async function start(
    env: Record<string, string>,
    readyWithinMs?: number,
  ): Promise<ServiceProcess> {
    const service = await startService({ MONGODB_URI: database.uri, ...env }, readyWithinMs);
    services.push(service);
    return service;
  }

  /** A start that is expected to fail: its exit code, stderr and how long it took. */
  function startToExit(env: Record<string, string>) {
    const started = Date.now();
    const child = spawn(process.execPath, [MAIN], {
      env: {
        PATH: process.env.PATH,
        NODE_ENV: 'production',
        HOST: '127.0.0.1',
        PORT: '0',
        ADMIN_API_KEY: TEST_ADMIN_KEY,
        LOG_LEVEL: 'warn',
        ...env,
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString('utf8')));
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString('utf8')));
    return new Promise<{ code: number | null; stdout: string; stderr: string; ms: number }>(
      (resolve) =>
        child.once('exit', (code) => resolve({ code, stdout, stderr, ms: Date.now() - started })),
    );
  }

  async function createUser(service: ServiceProcess, email: string): Promise<void> {
    const res = await service.send(
      'POST',
      '/admin/users',
      { 'X-Api-Key': TEST_ADMIN_KEY },
      { email },
    );
    expect(res.status).toBe(200);
  }

  it('stores everything in the database named in MONGODB_URI', async () => {
    const name = uniqueDbName(__filename);
    const service = await start({ MONGODB_URI: uriNaming(name) });
    await createUser(service, 'uri-db@example.com');
    expect(await client.db(name).collection('users').countDocuments()).toBe(1);
    expect(await client.db('profile_data').collection('users').countDocuments()).toBe(0);
    await service.kill();
  });

  it('refuses a URI database beside a different MONGODB_DB_NAME, naming both', async () => {
    const outcome = await startToExit({
      MONGODB_URI: uriNaming('staging'),
      MONGODB_DB_NAME: 'other',
    });
    expect(outcome.code).toBe(1);
    expect(outcome.stderr).toMatch(/"staging".*MONGODB_DB_NAME is "other"/);
  });

  it('refuses an empty URI database while profile_data holds a deployment, until told otherwise', async () => {
    // An earlier version's deployment: it ignored the URI's database and wrote profile_data.
    const legacy = await start({ MONGODB_URI: uriNaming('profile_data') });
    await createUser(legacy, 'legacy@example.com');
    await legacy.kill();

    const fresh = uniqueDbName(__filename);
    const refused = await startToExit({ MONGODB_URI: uriNaming(fresh) });
    expect(refused.code).toBe(1);
    const lines = refused.stderr.trim().split('\n');
    expect(lines).toHaveLength(1);
    expect(lines[0]).toContain(`"${fresh}"`);
    expect(lines[0]).toContain('"/profile_data"');
    expect(lines[0]).toContain('DB_ALLOW_FRESH_START=true');
    expect(await client.db(fresh).listCollections().toArray()).toEqual([]);

    // Pointing the URI at the old database keeps the data.
    const kept = await start({ MONGODB_URI: uriNaming('profile_data') });
    const users = await client.db('profile_data').collection('users').countDocuments();
    expect(users).toBe(1);
    await kept.kill();

    // A deliberate fresh start, after which the new database is the deployment's own.
    const started = await start({ MONGODB_URI: uriNaming(fresh), DB_ALLOW_FRESH_START: 'true' });
    await createUser(started, 'fresh@example.com');
    await started.kill();
    await (await start({ MONGODB_URI: uriNaming(fresh) })).kill();
  });

  it('brings four instances up at once on a database that answers its first handshakes late', async () => {
    database.freeze();
    const frozenAt = Date.now();
    const spawned: ServiceProcess[] = [];
    const waiting = (s: ServiceProcess) => s.stdout().includes('waiting for the database');
    const starts = Array.from({ length: 4 }, () =>
      startService(
        {
          MONGODB_URI: database.uri,
          MONGODB_DB_NAME: uniqueDbName(__filename),
          // Each attempt gives up after 1 s, so that every instance meets the frozen server
          // and says it waits within a second or two. The request-time bounds stay generous
          // (a connect may take 2.5 s): four instances starting at once on a loaded machine
          // are slow to handle their connect events, which is not what this test is about.
          DB_BOOT_ATTEMPT_TIMEOUT_MS: '1000',
          DB_SERVER_SELECTION_TIMEOUT_MS: '5000',
        },
        60_000,
        (s) => spawned.push(s),
      ),
    );
    // Resumed only once every instance has failed a handshake and said it waits, and not before
    // 3 s: each one has met the frozen server, whatever the machine's speed.
    try {
      const deadline = Date.now() + 45_000;
      while (!(spawned.length === 4 && spawned.every(waiting)) && Date.now() < deadline) {
        await new Promise((r) => setTimeout(r, 100));
      }
      expect(spawned.map(waiting)).toEqual([true, true, true, true]);
      await new Promise((r) => setTimeout(r, Math.max(0, frozenAt + 3_000 - Date.now())));
    } finally {
      database.thaw();
    }
    const ready = await Promise.all(starts);
    services.push(...ready);
    for (const service of ready) {
      expect((await service.send('GET', '/health/ready')).status).toBe(200);
      expect(service.process.exitCode).toBeNull();
      expect(service.stderr()).not.toMatch(/^\s+at /m);
    }
  }, 90_000);

  it('boots on a host too starved to answer a handshake within the request-time connect timeout, and still answers 503 within the bound on a frozen database', async () => {
    // On a host starved of CPU a connection's timer can fire before its connect event or its
    // handshake reply is handled. The proxy makes that happen on every connection: each
    // handshake reaches the database 1.5 s late, past the request-time connect timeout (half of
    // DB_SERVER_SELECTION_TIMEOUT_MS: 1 s) and well within a boot attempt's own
    // (DB_BOOT_ATTEMPT_TIMEOUT_MS, 10 s). With the request-time timeout every attempt failed and
    // the start gave up after DB_BOOT_TIMEOUT_MS. The host recovers once the first ping came
    // through, as a start on a busy node does.
    const proxy = await startWireProxy(database.uri);
    try {
      proxy.delayHandshakes(1_500);
      const spawned: ServiceProcess[] = [];
      const starting = startService(
        {
          MONGODB_URI: proxy.uri,
          MONGODB_DB_NAME: uniqueDbName(__filename),
          DB_BOOT_TIMEOUT_MS: '8000',
        },
        30_000,
        (s) => spawned.push(s),
      ).catch((error: unknown) => error as Error);
      const deadline = Date.now() + 30_000;
      // Until the first ping came through, or the start gave up.
      const exited = () => spawned.length > 0 && spawned[0]!.process.exitCode !== null;
      while (proxy.forwarded('ping') === 0 && !exited() && Date.now() < deadline) {
        await new Promise((r) => setTimeout(r, 50));
      }
      // A ping came through a handshake 1.5 s late: a boot attempt waited for it.
      const pingedThroughLateHandshake = proxy.forwarded('ping') > 0;
      proxy.delayHandshakes(undefined);
      const service = await starting;
      if (service instanceof Error) throw service;
      services.push(service);
      expect(pingedThroughLateHandshake).toBe(true);
      // The first ping's attempts did not fail. (The app's own connections may still meet a
      // late handshake before the proxy stops delaying them: with request-time bounds they
      // fail, and the start retries them, as it should.)
      expect(service.stdout()).not.toMatch(/waiting for the database[^\n]*\(first ping\)/);

      // Once booted, the request-time bounds are the documented ones: a frozen database
      // answers 503 within DB_SERVER_SELECTION_TIMEOUT_MS (2 s) + 1 s.
      database.freeze();
      try {
        const asked = Date.now();
        const res = await service.send('GET', '/health/ready');
        expect(res.status).toBe(503);
        expect(Date.now() - asked).toBeLessThan(3_000);
      } finally {
        database.thaw();
      }
    } finally {
      await proxy.close();
    }
  }, 60_000);

  it('gives up after DB_BOOT_TIMEOUT_MS with one line naming the address and the setting', async () => {
    const port = await findFreePort();
    const outcome = await startToExit({
      MONGODB_URI: `mongodb://127.0.0.1:${port}/`,
      DB_BOOT_TIMEOUT_MS: '2000',
      // Attempts of 0.5 s: several fit in the bound, each followed by a line saying it waits.
      DB_BOOT_ATTEMPT_TIMEOUT_MS: '500',
      DB_SERVER_SELECTION_TIMEOUT_MS: '500',
    });
    expect(outcome.code).toBe(1);
    const lines = outcome.stderr.trim().split('\n');
    expect(lines).toEqual([
      expect.stringMatching(
        new RegExp(
          `^cannot reach the database at 127\\.0\\.0\\.1:${port} within DB_BOOT_TIMEOUT_MS=2000 ms`,
        ),
      ),
    ]);
    // It waited, saying so, and gave up close to the bound.
    expect(outcome.stdout).toContain('waiting for the database');
    expect(outcome.ms).toBeGreaterThanOrEqual(2000);
    expect(outcome.ms).toBeLessThan(20_000);
  });
});
