import { MongoClient } from 'mongodb';
import { TEST_ADMIN_KEY, testDatabaseUri, uniqueDbName } from '../support/app';
import { startService, type ServiceProcess } from '../support/service-process';
import { until, untilSeenAfter } from '../support/until';

/**
 * Plan changes reach every instance within the documented bound (docs/plans.md, "How a change
 * reaches every instance"): two real instances (`node dist/main.js`) on one database with
 * PLAN_CACHE_MS = 1 s. Each change is written through A after both instances have read (and
 * cached) the state before it, and GET /me is polled on both, never slept for: the instance that
 * wrote sees it with its next request, the other in every request sent PLAN_CACHE_MS after the
 * write (see seenOnBoth); an `until` that passes takes effect on both at that moment.
 */
const PLAN_CACHE_MS = 1000;
/** Date.now()'s whole milliseconds, which the cache compares, against the test's clock. */
const CLOCK_SLACK_MS = 10;
const ENV = { LOG_LEVEL: 'warn', PLAN_CACHE_MS: String(PLAN_CACHE_MS), MAX_COLLECTIONS: '100' };
const HOUR = 3_600_000;
const dbName = uniqueDbName(__filename);
let a: ServiceProcess;
let b: ServiceProcess;

beforeAll(async () => {
  [a, b] = await Promise.all([
    startService({ ...ENV, MONGODB_DB_NAME: dbName }),
    startService({ ...ENV, MONGODB_DB_NAME: dbName }),
  ]);
}, 180_000);

afterAll(async () => {
  await Promise.all([a?.kill(), b?.kill()]);
  const client = new MongoClient(testDatabaseUri());
  await client.db(dbName).dropDatabase();
  await client.close();
});

const OPERATOR = { 'X-Api-Key': TEST_ADMIN_KEY };

async function call(
  service: ServiceProcess,
  method: string,
  path: string,
  headers: Record<string, string>,
  body?: unknown,
  status = 200,
): Promise<Record<string, unknown>> {
  const reply = await service.send(method, path, headers, body);
  if (reply.status !== status)
    throw new Error(`${method} ${path}: ${reply.status} (expected ${status}) ${reply.body}`);
  return JSON.parse(reply.body) as Record<string, unknown>;
}

interface Me {
  plan: { name: string; since: string; until: string | null } | null;
  limits: Record<string, { limit: number | null; used?: number }>;
}

const me = async (service: ServiceProcess, key: string) =>
  (await call(service, 'GET', '/me', { 'X-Api-Key': key })) as unknown as Me;

async function newUser(): Promise<{ subject: string; key: string }> {
  const created = await call(a, 'POST', '/admin/users', OPERATOR, {
    email: `plans-${Math.random().toString(36).slice(2)}@example.com`,
  });
  return {
    subject: (created.profile as { subject: string }).subject,
    key: created.apiKey as string,
  };
}

const putPlan = (name: string, limits: object) =>
  call(a, 'PUT', `/admin/plans/${name}`, OPERATOR, { limits });

const setPlans = (subject: string, entries: object[]) =>
  call(a, 'PUT', `/admin/users/${encodeURIComponent(subject)}/plans`, OPERATOR, entries);

const iso = (at: number) => new Date(at).toISOString();

/**
 * A (which wrote) holds it in its first answer; B is polled until it does. Every cached plan is
 * trusted for PLAN_CACHE_MS from the moment its read began (src/plans/timed-cache.ts), so a poll
 * of B sent PLAN_CACHE_MS after the write was answered must hold it however slow the machine is:
 * one sent that late that does not fails the test at once. One sent earlier may see either.
 */
async function seenOnBoth(what: string, key: string, holds: (me: Me) => boolean): Promise<void> {
  const written = performance.now();
  expect(holds(await me(a, key))).toBe(true);
  await untilSeenAfter(`${what} on B`, written, PLAN_CACHE_MS + CLOCK_SLACK_MS, async () =>
    holds(await me(b, key)),
  );
}

it('a new plan entry takes effect on the instance that wrote it at once, on the other within PLAN_CACHE_MS', async () => {
  await putPlan('entry-basic', { collections: 5, webhooks: 2 });
  const user = await newUser();
  // Both instances have read (and keep) the user without a plan.
  for (const service of [a, b]) expect((await me(service, user.key)).plan).toBeNull();
  await setPlans(user.subject, [
    { planName: 'entry-basic', since: iso(Date.now() - HOUR), until: iso(Date.now() + HOUR) },
  ]);
  await seenOnBoth(
    'the new entry',
    user.key,
    (m) => m.plan?.name === 'entry-basic' && m.limits.collections?.limit === 5,
  );
});

it('a catalogue edit takes effect on both instances within PLAN_CACHE_MS', async () => {
  await putPlan('edited', { collections: 5 });
  const user = await newUser();
  await setPlans(user.subject, [
    { planName: 'edited', since: iso(Date.now() - HOUR), until: iso(Date.now() + HOUR) },
  ]);
  for (const service of [a, b])
    await until(
      'the plan is active',
      async () => (await me(service, user.key)).limits.collections?.limit === 5,
    );
  await putPlan('edited', { collections: 9, itemsPerCollection: 40 });
  await seenOnBoth(
    'the edited limits',
    user.key,
    (m) => m.limits.collections?.limit === 9 && m.limits.itemsPerCollection?.limit === 40,
  );
  // A limit the edit leaves out falls back to the deployment's setting on both.
  await putPlan('edited', { itemsPerCollection: 40 });
  await seenOnBoth('the fallback', user.key, (m) => m.limits.collections?.limit === 100);
});

it('an until that passes takes effect on both instances at that moment, and the earlier entry applies again', async () => {
  await putPlan('until-base', { webhooks: 1 });
  await putPlan('until-trial', { webhooks: 7 });
  const user = await newUser();
  // Far enough ahead that both instances have shown the trial before it ends, on a busy machine.
  const ends = Date.now() + 10_000;
  await setPlans(user.subject, [
    { planName: 'until-base', since: iso(Date.now() - 2 * HOUR), until: iso(Date.now() + HOUR) },
    { planName: 'until-trial', since: iso(Date.now() - HOUR), until: iso(ends) },
  ]);
  for (const service of [a, b])
    await until(
      'the trial is active',
      async () => (await me(service, user.key)).plan?.name === 'until-trial',
    );
  expect(Date.now()).toBeLessThan(ends);
  for (const service of [a, b]) {
    // The active entry is chosen at every request: one sent after `ends` is past the trial.
    await untilSeenAfter(
      'the trial has ended',
      ends,
      1,
      async () => {
        const m = await me(service, user.key);
        return m.plan?.name === 'until-base' && m.limits.webhooks?.limit === 1;
      },
      Date.now,
    );
    // Never before it ends.
    expect(Date.now()).toBeGreaterThanOrEqual(ends);
  }
});
