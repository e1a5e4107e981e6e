import { createTestApp, type TestApp } from '../support/app';
import { createUser, type TestUser } from '../support/factories';
import { startOwnDatabase, type OwnDatabase } from '../support/own-database';

const SELECTION_TIMEOUT_MS = 1500;
/** The promise: every request answers within the selection timeout plus a second. */
const BOUND_MS = SELECTION_TIMEOUT_MS + 1000;

interface Outcome {
  name: string;
  status: number;
  elapsed: number;
  contentType?: string;
  retryAfter?: string;
  code?: unknown;
}

/**
 * Freezes the database process with SIGSTOP (what a frozen VM or a network partition looks like
 * to the service: connections stay open, nothing answers) under a small load, then thaws it.
 * Uses a database server of its own, so the other test files keep theirs.
 */
describe('database frozen', () => {
  let database: OwnDatabase;
  let t: TestApp;
  let user: TestUser;

  beforeAll(async () => {
    database = await startOwnDatabase('frozen');
    t = await createTestApp(__filename, {
      MONGODB_URI: database.uri,
      DB_SERVER_SELECTION_TIMEOUT_MS: String(SELECTION_TIMEOUT_MS),
    });
    user = await createUser(t);
  });

  afterAll(async () => {
    database?.thaw();
    await t?.close();
    await database?.stop();
  });

  async function timed(name: string, send: () => Promise<import('supertest').Response>) {
    const started = Date.now();
    const res = await send();
    const outcome: Outcome = {
      name,
      status: res.status,
      elapsed: Date.now() - started,
      contentType: res.headers['content-type'],
      retryAfter: res.headers['retry-after'],
      code: (res.body as { code?: unknown } | undefined)?.code,
    };
    return outcome;
  }

  /** Four requests of each kind at once: a write, a read and the readiness probe. */
  function wave(round: number): Promise<Outcome[]> {
    const requests: Promise<Outcome>[] = [];
    for (let i = 0; i < 4; i++) {
      requests.push(
        timed('POST /data/c', () =>
          t.http().post('/data/c').set('X-Api-Key', user.apiKey).send({ item: { round, i } }),
        ),
        timed('GET /project', () => t.http().get('/project').set('X-Api-Key', user.apiKey)),
        timed('GET /health/ready', () => t.http().get('/health/ready')),
      );
    }
    return Promise.all(requests);
  }

  it('answers every request with 503 within the bound while frozen, and recovers on SIGCONT', async () => {
    const healthy = await wave(0);
    expect(healthy.map((o) => o.status)).toEqual(healthy.map(() => 200));

    try {
      // The first wave is in flight when the server freezes: it may still finish, but in time.
      const inFlight = wave(1);
      database.freeze();
      const outcomes = [...(await inFlight), ...(await wave(2)), ...(await wave(3))];

      const slow = outcomes.filter((o) => o.elapsed >= BOUND_MS);
      expect(slow).toEqual([]);
      const frozenAnswers = outcomes.slice(12);
      for (const o of frozenAnswers) {
        expect(o).toMatchObject({ status: 503, code: 'DATABASE_UNAVAILABLE' });
        expect(o.contentType).toMatch(/^application\/problem\+json/);
        expect(Number(o.retryAfter)).toBeGreaterThan(0);
      }
      for (const o of outcomes.slice(0, 12)) expect([200, 503]).toContain(o.status);
      await t.http().get('/health').expect(200);
    } finally {
      database.thaw();
    }

    // Back without restarting the app: the driver reconnects by itself.
    const deadline = Date.now() + 30_000;
    let statuses: number[] = [];
    while (Date.now() < deadline) {
      statuses = (await wave(4)).map((o) => o.status);
      if (statuses.every((s) => s === 200)) break;
      await new Promise((r) => setTimeout(r, 250));
    }
    expect(statuses).toEqual(statuses.map(() => 200));
  });
});
