import { randomBytes } from 'node:crypto';
import type { Response } from 'supertest';
import { createTestApp, TEST_ADMIN_KEY, uniqueDbName, type TestApp } from '../support/app';
import { createUser } from '../support/factories';
import { holdClockInWindow, moveClock } from '../support/held-clock';
import { parseExposition, valueOf } from '../support/prometheus';

const MAX = 5;

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

/** mongodb_commands_total: every command checks a connection out of the pool. */
async function commandsSent(t: TestApp): Promise<number> {
  const res = await t.http().get('/metrics').expect(200);
  return valueOf(parseExposition(res.text), 'mongodb_commands_total');
}

function wrongKey(): string {
  return `pds_${randomBytes(32).toString('base64url')}`;
}

/**
 * Budgets live in fixed windows aligned to the epoch. The apps run in this process, so each test
 * holds their clock just after a window starts: its requests all fall in that window however long
 * they take, and a window ends when the test moves the clock on.
 */

function expectRateLimited(res: Response, windowMs: number): void {
  expect(res.status).toBe(429);
  expect(res.headers['content-type']).toMatch(/^application\/problem\+json/);
  expect(res.body).toMatchObject({ status: 429, code: 'RATE_LIMITED' });
  const retryAfter = Number(res.headers['retry-after']);
  expect(retryAfter).toBeGreaterThan(0);
  expect(retryAfter).toBeLessThanOrEqual(Math.ceil(windowMs / 1000));
}

describe('failed authentications per client address', () => {
  const apps: TestApp[] = [];

  async function app(env: Record<string, string>): Promise<TestApp> {
    const t = await createTestApp(__filename, { AUTH_FAILURE_MAX: String(MAX), ...env });
    apps.push(t);
    return t;
  }

  afterEach(async () => {
    jest.useRealTimers();
    for (const t of apps.splice(0)) await t.close();
  });

  it('answers 429 RATE_LIMITED to wrong keys from an address over budget until its window ends, valid keys still 200', async () => {
    const windowMs = 3000;
    const t = await app({ AUTH_FAILURE_WINDOW_MS: String(windowMs) });
    const user = await createUser(t);
    holdClockInWindow(windowMs);

    // No key guesses nothing: a plain 401 that does not use the budget.
    for (let i = 0; i < MAX + 1; i += 1) {
      const none = await t.http().get('/api-keys');
      expect(none.status).toBe(401);
      expect(none.body.code).toBe('UNAUTHENTICATED');
    }
    for (let i = 0; i < MAX; i += 1) {
      const res = await t.http().get('/api-keys').set('X-Api-Key', wrongKey());
      expect(res.status).toBe(401);
      expect(res.body.code).toBe('UNAUTHENTICATED');
    }
    const over = await t.http().get('/api-keys').set('X-Api-Key', wrongKey());
    expectRateLimited(over, windowMs);

    // Valid keys (the operator's too) from the same address keep working.
    await t.http().get('/api-keys').set('X-Api-Key', user.apiKey).expect(200);
    await t.http().get('/api-keys').set('Authorization', `Bearer ${user.apiKey}`).expect(200);
    await t
      .http()
      .post('/admin/teams')
      .set('X-Api-Key', TEST_ADMIN_KEY)
      .send({ name: 'x' })
      .expect(200);
    const none = await t.http().get('/api-keys');
    expect(none.status).toBe(401);
    expect(none.body.code).toBe('UNAUTHENTICATED');

    const last = await t.http().get('/api-keys').set('X-Api-Key', wrongKey());
    expectRateLimited(last, windowMs);
    expect(await t.connection.collection('auth_failures').countDocuments()).toBe(MAX);
    moveClock(Number(last.headers['retry-after']) * 1000);

    await t.http().get('/api-keys').set('X-Api-Key', user.apiKey).expect(200);
    const again = await t.http().get('/api-keys').set('X-Api-Key', wrongKey()).expect(401);
    expect(again.body.code).toBe('UNAUTHENTICATED');
  });

  it('shares one budget between two instances on one database', async () => {
    const windowMs = 3000;
    const env = {
      AUTH_FAILURE_WINDOW_MS: String(windowMs),
      MONGODB_DB_NAME: uniqueDbName(__filename),
    };
    const a = await app(env);
    const b = await app(env);
    const user = await createUser(a);
    // Revoked and unknown keys are the same failure.
    const revoked = await a
      .http()
      .post('/api-keys')
      .set('X-Api-Key', user.apiKey)
      .send({ name: 'revoked' })
      .expect(200);
    await a
      .http()
      .delete(`/api-keys/${revoked.body.key.id}`)
      .set('X-Api-Key', user.apiKey)
      .expect(204);
    holdClockInWindow(windowMs);

    for (let i = 0; i < 3; i += 1) {
      await a.http().get('/api-keys').set('X-Api-Key', wrongKey()).expect(401);
    }
    for (let i = 0; i < 2; i += 1) {
      await b.http().get('/api-keys').set('X-Api-Key', revoked.body.apiKey).expect(401);
    }
    // The 6th failure overall, the 3rd this instance has seen; the valid key still works there.
    expectRateLimited(await b.http().get('/api-keys').set('X-Api-Key', wrongKey()), windowMs);
    await b.http().get('/api-keys').set('X-Api-Key', user.apiKey).expect(200);

    // Instance a learns it at its first failure from the address, and refuses wrong keys from
    // then on, without recording more; the valid key keeps working there too.
    await a.http().get('/api-keys').set('X-Api-Key', user.apiKey).expect(200);
    expectRateLimited(await a.http().get('/api-keys').set('X-Api-Key', wrongKey()), windowMs);
    expectRateLimited(
      await a.http().get('/api-keys').set('X-Api-Key', revoked.body.apiKey),
      windowMs,
    );
    await a.http().get('/api-keys').set('X-Api-Key', user.apiKey).expect(200);
    expect(await a.connection.collection('auth_failures').countDocuments()).toBe(MAX);
  });

  it('keeps a cached key, a key new to the instance and the operator key working while another client on the address keeps guessing', async () => {
    const windowMs = 6000;
    const t = await app({
      AUTH_FAILURE_WINDOW_MS: String(windowMs),
      AUTH_FAILURE_LOOKUP_INTERVAL_MS: '200',
    });
    const cachedUser = await createUser(t);
    const newUser = await createUser(t);
    holdClockInWindow(windowMs);
    // Looked up once: this instance has the key in its cache (API_KEY_CACHE_MS, 5 s).
    await t.http().get('/api-keys').set('X-Api-Key', cachedUser.apiKey).expect(200);
    for (let i = 0; i < MAX; i += 1) {
      await t.http().get('/api-keys').set('X-Api-Key', wrongKey()).expect(401);
    }
    expectRateLimited(await t.http().get('/api-keys').set('X-Api-Key', wrongKey()), windowMs);

    // Both clients share the loopback address; the guesser's waves overlap the valid requests.
    const guesses: Response[] = [];
    const guesser = (async () => {
      for (let wave = 0; wave < 4; wave += 1) {
        const sent = Array.from({ length: 10 }, () =>
          t.http().get('/api-keys').set('X-Api-Key', wrongKey()),
        );
        guesses.push(...(await Promise.all(sent)));
      }
    })();
    const valid = (async () => {
      const answers: number[] = [];
      const ask = async (req: ReturnType<ReturnType<TestApp['http']>['get']>) =>
        answers.push((await req).status);
      await ask(t.http().get('/api-keys').set('X-Api-Key', cachedUser.apiKey));
      await ask(t.http().get('/api-keys').set('X-Api-Key', newUser.apiKey));
      await ask(t.http().get('/me').set('X-Api-Key', TEST_ADMIN_KEY));
      await ask(t.http().get('/me').set('Authorization', `Bearer ${newUser.apiKey}`));
      await ask(t.http().get('/api-keys').set('X-Api-Key', cachedUser.apiKey));
      return answers;
    })();
    const [answers] = await Promise.all([valid, guesser]);

    expect(answers).toEqual([200, 200, 200, 200, 200]);
    expect(guesses).toHaveLength(40);
    for (const res of guesses) expectRateLimited(res, windowMs);
    expect(await t.connection.collection('auth_failures').countDocuments()).toBe(MAX);
  });

  it('looks every valid key up from an address over budget with the key cache off', async () => {
    const windowMs = 6000;
    const t = await app({
      AUTH_FAILURE_WINDOW_MS: String(windowMs),
      AUTH_FAILURE_LOOKUP_INTERVAL_MS: '100',
      API_KEY_CACHE_MS: '0',
    });
    const user = await createUser(t);
    holdClockInWindow(windowMs);
    for (let i = 0; i < MAX; i += 1) {
      await t.http().get('/api-keys').set('X-Api-Key', wrongKey()).expect(401);
    }
    expectRateLimited(await t.http().get('/api-keys').set('X-Api-Key', wrongKey()), windowMs);

    for (let i = 0; i < 3; i += 1) {
      const [mine, ...theirs] = await Promise.all([
        t.http().get('/api-keys').set('X-Api-Key', user.apiKey),
        ...Array.from({ length: 5 }, () => t.http().get('/api-keys').set('X-Api-Key', wrongKey())),
      ]);
      expect(mine?.status).toBe(200);
      for (const res of theirs) expectRateLimited(res, windowMs);
    }
    // A key revoked meanwhile is a wrong key like any other.
    const other = await t
      .http()
      .post('/api-keys')
      .set('X-Api-Key', user.apiKey)
      .send({ name: 'other' })
      .expect(200);
    await t.http().get('/api-keys').set('X-Api-Key', other.body.apiKey).expect(200);
    await t
      .http()
      .delete(`/api-keys/${other.body.key.id}`)
      .set('X-Api-Key', user.apiKey)
      .expect(204);
    expectRateLimited(
      await t.http().get('/api-keys').set('X-Api-Key', other.body.apiKey),
      windowMs,
    );
    expect(await t.connection.collection('auth_failures').countDocuments()).toBe(MAX);
  });

  it('costs at most one database command per AUTH_FAILURE_LOOKUP_INTERVAL_MS however fast an over-budget address guesses', async () => {
    const windowMs = 8000;
    const intervalMs = 500;
    const t = await app({
      AUTH_FAILURE_WINDOW_MS: String(windowMs),
      AUTH_FAILURE_LOOKUP_INTERVAL_MS: String(intervalMs),
      // As in production: a rate limit counted in the database must not add commands per guess.
      RATE_LIMIT_STORE: 'mongo',
      // The background work (the feed's hub and sweeps, drop and erasure sweeps) pushed out past
      // this test, so that the commands counted are the requests' own.
      EVENTS_POLL_MS: '60000',
      EVENTS_SWEEP_MS: '60000',
      LIFECYCLE_POLL_MS: '60000',
      IDEMPOTENCY_SWEEP_INTERVAL_MS: '600000',
    });
    holdClockInWindow(windowMs);
    for (let i = 0; i < MAX; i += 1) {
      await t.http().get('/api-keys').set('X-Api-Key', wrongKey()).expect(401);
    }
    expectRateLimited(await t.http().get('/api-keys').set('X-Api-Key', wrongKey()), windowMs);

    const before = await commandsSent(t);
    const started = performance.now();
    const guesses: Response[] = [];
    for (let wave = 0; wave < 4; wave += 1) {
      guesses.push(
        ...(await Promise.all(
          Array.from({ length: 25 }, () => t.http().get('/api-keys').set('X-Api-Key', wrongKey())),
        )),
      );
    }
    const elapsed = performance.now() - started;
    const commands = (await commandsSent(t)) - before;

    for (const res of guesses) expectRateLimited(res, windowMs);
    // Lookups start at least intervalMs apart: in `elapsed` ms at most floor(elapsed/interval)+1,
    // against 100 guesses (and 2 commands per wave of them were they only batched, not paced).
    expect(commands).toBeGreaterThanOrEqual(1);
    expect(commands).toBeLessThanOrEqual(Math.floor(elapsed / intervalMs) + 1);
    expect(await t.connection.collection('auth_failures').countDocuments()).toBe(MAX);
  });

  it('lets exactly AUTH_FAILURE_MAX of many concurrent failures through', async () => {
    const windowMs = 8000;
    const t = await app({ AUTH_FAILURE_WINDOW_MS: String(windowMs) });
    holdClockInWindow(windowMs);

    const responses = await Promise.all(
      Array.from({ length: 20 }, () => t.http().get('/api-keys').set('X-Api-Key', wrongKey())),
    );
    const statuses = responses.map((r) => r.status);
    expect(statuses.filter((s) => s === 401)).toHaveLength(MAX);
    expect(statuses.filter((s) => s === 429)).toHaveLength(20 - MAX);
    for (const res of responses.filter((r) => r.status === 429)) expectRateLimited(res, windowMs);
    expect(await t.connection.collection('auth_failures').countDocuments()).toBe(MAX);
  });

  it('keeps one budget per client address (X-Forwarded-For behind TRUST_PROXY)', async () => {
    const windowMs = 3000;
    const t = await app({ AUTH_FAILURE_WINDOW_MS: String(windowMs), TRUST_PROXY: 'true' });
    const user = await createUser(t);
    holdClockInWindow(windowMs);
    const from = (ip: string, key: string) =>
      t.http().get('/api-keys').set('X-Forwarded-For', ip).set('X-Api-Key', key);

    for (let i = 0; i < MAX; i += 1) await from('198.51.100.1', wrongKey()).expect(401);
    expectRateLimited(await from('198.51.100.1', wrongKey()), windowMs);
    await from('198.51.100.1', user.apiKey).expect(200);
    const other = await from('198.51.100.2', wrongKey()).expect(401);
    expect(other.body.code).toBe('UNAUTHENTICATED');
    await from('198.51.100.2', user.apiKey).expect(200);
  });

  it('deletes the failures of ended windows, keeping the previous window', async () => {
    const windowMs = 60_000;
    const t = await app({ AUTH_FAILURE_WINDOW_MS: String(windowMs) });
    holdClockInWindow(windowMs);
    const start = Math.floor(Date.now() / windowMs) * windowMs;
    const failures = t.connection.collection<{ _id: string; windowEnd: Date }>('auth_failures');
    await failures.insertMany([
      { _id: `203.0.113.9|${start - 2 * windowMs}|0`, windowEnd: new Date(start - windowMs) },
      { _id: `203.0.113.9|${start - windowMs}|0`, windowEnd: new Date(start) },
    ]);

    await t.http().get('/api-keys').set('X-Api-Key', wrongKey()).expect(401);
    // The clean-up runs beside the request, not before its answer.
    let remaining: string[] = [];
    for (let i = 0; i < 50; i += 1) {
      remaining = (await failures.find().toArray()).map((d) => d._id).sort();
      if (remaining.length === 2) break;
      await sleep(50);
    }
    expect(remaining).toHaveLength(2);
    expect(remaining).toContain(`203.0.113.9|${start - windowMs}|0`);
    expect(remaining.some((id) => id.endsWith(`|${start}|0`))).toBe(true);
  });
});
