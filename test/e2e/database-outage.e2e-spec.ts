import {
  findFreePort,
  readDevDatabaseSettings,
  removeThrowawayDataDir,
  resolveDatabase,
  throwawayDataDir,
  type ResolvedDatabase,
} from '../../tools/dev-database';
import { createTestApp, type TestApp } from '../support/app';
import { createUser, type TestUser } from '../support/factories';

/**
 * Stops the real database under a running service and starts it again. Uses a database server
 * of its own (started like `npm start` would, on a fixed port and data directory), so the other
 * test files keep theirs.
 */
describe('database outage', () => {
  const dataDir = throwawayDataDir('pds-outage-');
  let database: ResolvedDatabase;
  let port: number;
  let t: TestApp;
  let user: TestUser;

  async function startDatabase(): Promise<ResolvedDatabase> {
    return resolveDatabase({
      ...readDevDatabaseSettings({}),
      dataDir,
      port,
      log: () => undefined,
    });
  }

  beforeAll(async () => {
    // A port the OS reports free (a guessed one can be an ephemeral port in use); the restart
    // below binds it again.
    port = await findFreePort();
    database = await startDatabase();
    t = await createTestApp(__filename, {
      MONGODB_URI: database.uri,
      DB_SERVER_SELECTION_TIMEOUT_MS: '1500',
    });
    user = await createUser(t);
  });

  // A failed start must not leave the database server running (it would keep jest alive).
  afterAll(async () => {
    try {
      await t?.close();
    } finally {
      await database?.stop();
      removeThrowawayDataDir(dataDir);
    }
  });

  it('answers 503 with Retry-After within 5 s while the database is down, then recovers by itself', async () => {
    await t.http().get('/api-keys').set('X-Api-Key', user.apiKey).expect(200);

    await database.stop();
    const started = Date.now();
    const down = await t.http().get('/api-keys').set('X-Api-Key', user.apiKey);
    const elapsed = Date.now() - started;
    expect(down.status).toBe(503);
    expect(down.body.code).toBe('DATABASE_UNAVAILABLE');
    expect(down.headers['content-type']).toMatch(/^application\/problem\+json/);
    expect(Number(down.headers['retry-after'])).toBeGreaterThan(0);
    expect(JSON.stringify(down.body)).not.toMatch(/Mongo|ECONNREFUSED|127\.0\.0\.1/);
    expect(elapsed).toBeLessThan(5000);
    await t.http().get('/health/ready').expect(503);
    await t.http().get('/health').expect(200);

    database = await startDatabase();
    const deadline = Date.now() + 30_000;
    let status = 0;
    while (Date.now() < deadline) {
      status = (await t.http().get('/api-keys').set('X-Api-Key', user.apiKey)).status;
      if (status === 200) break;
      await new Promise((r) => setTimeout(r, 250));
    }
    expect(status).toBe(200);
    await t.http().get('/health/ready').expect(200);
  });
});
