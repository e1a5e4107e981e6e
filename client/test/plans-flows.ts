// Plans and usage through the typed client: the operator puts a plan in the catalogue and gives
// it to a user; the user's GET /me shows the plan and each limit with its use, a write past the
// plan's limit is a typed 409 PLAN_LIMIT_EXCEEDED naming the limit, its value, the use and the
// plan, and GET /me/usage answers the tenant's days.
import assert from 'node:assert/strict';
import { createApiClient, unwrap } from '../src';
import { expectProblem, newUser, unique, type Target } from './support';

export async function planLimitsFlow(target: Target): Promise<void> {
  const operator = createApiClient({ baseUrl: target.baseUrl, apiKey: target.adminKey });
  const { api, subject } = await newUser(target);
  const planName = unique('one-collection');
  const plan = await unwrap(
    operator.PUT('/admin/plans/{planName}', {
      params: { path: { planName } },
      body: { limits: { collections: 1 }, metadata: { displayName: 'One collection' } },
    }),
  );
  assert.equal(plan.limits.collections, 1);
  const since = new Date(Date.now() - 60_000).toISOString();
  const until = new Date(Date.now() + 24 * 3600_000).toISOString();
  await unwrap(
    operator.PUT('/admin/users/{subject}/plans', {
      params: { path: { subject } },
      body: [{ planName, since, until }],
    }),
  );

  await unwrap(
    api.POST('/data/{collection}', {
      params: { path: { collection: 'notes' } },
      body: { item: { text: 'the one collection' } },
    }),
  );
  const me = await unwrap(api.GET('/me'));
  assert.equal(me.plan?.name, planName);
  assert.deepEqual(me.limits.collections, { limit: 1, used: 1 });

  const refused = expectProblem(
    await api.POST('/data/{collection}', {
      params: { path: { collection: 'tasks' } },
      body: { item: { title: 'a second collection' } },
    }),
    409,
    'PLAN_LIMIT_EXCEEDED',
  );
  assert.deepEqual(
    [refused.limit, refused.max, refused.usage, refused.plan],
    ['collections', 1, 1, planName],
  );

  const today = new Date().toISOString().slice(0, 10);
  const usage = await unwrap(
    api.GET('/me/usage', { params: { query: { from: today, to: today } } }),
  );
  assert.equal(usage.from, today);
  assert.equal(usage.to, today);
  // What this instance counted is flushed every USAGE_FLUSH_MS: today may have no row yet.
  assert.ok(usage.days.every((day) => day.day === today));
}
