import { createTestApp, TEST_ADMIN_KEY, type TestApp } from '../support/app';
import {
  addTeamMember,
  createSubKey,
  createTeam,
  createUser,
  type TestTeam,
  type TestUser,
} from '../support/factories';
import { as, type Client } from '../support/http';
import { errorFields, expectProblem } from '../support/problems';

/**
 * The plan catalogue (PUT/GET/DELETE /admin/plans), plans held by teams, and what GET /me shows of
 * a tenant's active plan and limits, on one instance (plans-instances.e2e-spec.ts: two).
 */
let t: TestApp;
let operator: Client;

const DEPLOYMENT = {
  MAX_COLLECTIONS: '7',
  MAX_INDEXES: '4',
  WEBHOOK_MAX: '6',
  FILE_QUOTA_BYTES: '5000000',
  EVENTS_MAX_STREAMS_PER_KEY: '3',
  IMPORT_MAX_BYTES: '2000000',
  RATE_LIMIT_MAX: '900',
  WEBHOOK_ALLOW_PRIVATE: 'true',
};

beforeAll(async () => {
  t = await createTestApp(__filename, DEPLOYMENT);
  operator = as(t, TEST_ADMIN_KEY);
});
afterAll(async () => t.close());

const HOUR = 3_600_000;
const iso = (offsetMs: number) => new Date(Date.now() + offsetMs).toISOString();
/** An entry that began an hour ago and ends in a day. */
const current = (planName: string, metadata?: object) => ({
  planName,
  since: iso(-HOUR),
  until: iso(24 * HOUR),
  ...(metadata ? { metadata } : {}),
});

let plans = 0;
/** A fresh plan name, so tests do not share catalogue entries. */
const planName = (prefix: string) => `${prefix}-${++plans}`;

function putPlan(name: string, limits: object, headers: Record<string, string> = {}) {
  return operator.put(`/admin/plans/${name}`, { limits }, { headers });
}

const setUserPlans = (user: TestUser, entries: object[]) =>
  operator.put(`/admin/users/${encodeURIComponent(user.subject)}/plans`, entries).expect(200);
const setTeamPlans = (team: TestTeam, entries: object[]) =>
  operator.put(`/admin/teams/${team.teamId}/plans`, entries).expect(200);

describe('the catalogue', () => {
  it('creates a plan, lists it and reads it with its ETag', async () => {
    const name = planName('pro');
    const created = await operator
      .put(`/admin/plans/${name}`, {
        limits: { collections: 20, itemsPerCollection: 1000 },
        metadata: { displayName: 'Pro', priceCents: 2900 },
      })
      .expect(200);
    expect(created.headers.etag).toBe('"plan-1"');
    expect(created.body).toEqual({
      name,
      limits: { collections: 20, itemsPerCollection: 1000 },
      metadata: { displayName: 'Pro', priceCents: 2900 },
      version: 1,
      updatedAt: expect.any(String),
    });
    const read = await operator.get(`/admin/plans/${name}`).expect(200);
    expect(read.headers.etag).toBe('"plan-1"');
    expect(read.body).toEqual(created.body);
    await operator
      .get(`/admin/plans/${name}`, { headers: { 'If-None-Match': '"plan-1"' } })
      .expect(304);
    const list = await operator.get('/admin/plans').expect(200);
    expect(list.body).toContainEqual(created.body);
    const names = (list.body as { name: string }[]).map((p) => p.name);
    expect(names).toEqual([...names].sort());
  });

  it('replaces a plan: without If-Match, and with the current ETag; a stale one is a 412', async () => {
    const name = planName('edit');
    await putPlan(name, { webhooks: 1 }).expect(200);
    const second = await putPlan(name, { webhooks: 2 }).expect(200);
    expect(second.headers.etag).toBe('"plan-2"');
    expect(second.body).toMatchObject({ limits: { webhooks: 2 }, metadata: {}, version: 2 });

    const stale = await putPlan(name, { webhooks: 9 }, { 'If-Match': '"plan-1"' });
    expectProblem(stale, 412, 'PRECONDITION_FAILED');
    expect(stale.headers.etag).toBe('"plan-2"');
    expect((await operator.get(`/admin/plans/${name}`).expect(200)).body.limits).toEqual({
      webhooks: 2,
    });

    const third = await putPlan(name, { streamsPerKey: 1 }, { 'If-Match': '"plan-2"' }).expect(200);
    expect(third.headers.etag).toBe('"plan-3"');
    // A replacement sets the whole plan: the limit it leaves out falls back again.
    expect(third.body.limits).toEqual({ streamsPerKey: 1 });
    await putPlan(name, { streamsPerKey: 2 }, { 'If-Match': '*' }).expect(200);
  });

  it('refuses If-Match on a plan that does not exist, and If-None-Match on a write', async () => {
    const absent = await putPlan(planName('absent'), {}, { 'If-Match': '*' });
    expectProblem(absent, 412, 'PRECONDITION_FAILED');
    expect(absent.headers.etag).toBeUndefined();
    expectProblem(
      await putPlan(planName('absent'), {}, { 'If-Match': '"plan-1"' }),
      412,
      'PRECONDITION_FAILED',
    );
    expectProblem(
      await putPlan(planName('inm'), {}, { 'If-None-Match': '*' }),
      400,
      'VALIDATION_FAILED',
    );
  });

  it('refuses unknown limits, values out of bounds and bad names with a 400 naming each', async () => {
    const name = planName('bad');
    const res = await putPlan(name, {
      collections: -1,
      indexesPerCollection: 64,
      itemsPerCollection: 0,
      fileBytes: 1.5,
      webhooks: '3',
      seats: 5,
    });
    expectProblem(res, 400, 'VALIDATION_FAILED');
    expect(errorFields(res, { distinct: true })).toEqual([
      'limits.collections',
      'limits.fileBytes',
      'limits.indexesPerCollection',
      'limits.itemsPerCollection',
      'limits.seats',
      'limits.webhooks',
    ]);
    expectProblem(await operator.put(`/admin/plans/${name}`, {}), 400, 'VALIDATION_FAILED');
    expectProblem(
      await operator.put(`/admin/plans/${name}`, { limits: {}, tier: 'gold' }),
      400,
      'VALIDATION_FAILED',
    );
    expectProblem(
      await operator.put(`/admin/plans/${name}`, { limits: [] }),
      400,
      'VALIDATION_FAILED',
    );
    for (const bad of ['-pro', 'a'.repeat(65), 'pro%20plus'])
      expectProblem(await putPlan(bad, {}), 400, 'VALIDATION_FAILED');
    await operator.get(`/admin/plans/${name}`).expect(404);
    // Zero is a limit (nothing may grow), and every bound's maximum is accepted.
    await putPlan(name, {
      collections: 0,
      indexesPerCollection: 63,
      itemsPerCollection: 1,
      fileBytes: 0,
      webhooks: 1000,
      requestsPerWindow: 0,
      streamsPerKey: 10_000,
      importBytes: 1024 ** 4,
    }).expect(200);
  });

  it('answers 404 PLAN_NOT_FOUND for a plan that does not exist', async () => {
    expectProblem(await operator.get('/admin/plans/nothing-here'), 404, 'PLAN_NOT_FOUND');
    expectProblem(await operator.delete('/admin/plans/nothing-here'), 404, 'PLAN_NOT_FOUND');
  });

  it('is for the operator only', async () => {
    const user = await createUser(t);
    expectProblem(await as(t, user).get('/admin/plans'), 403, 'FORBIDDEN');
    expectProblem(await as(t, user).put('/admin/plans/mine', { limits: {} }), 403, 'FORBIDDEN');
    expectProblem(await as(t, null).get('/admin/plans'), 401, 'UNAUTHENTICATED');
  });

  it('deletes a plan nobody holds, with If-Match; a stale tag is a 412', async () => {
    const name = planName('gone');
    await putPlan(name, {}).expect(200);
    await putPlan(name, { webhooks: 1 }).expect(200);
    const stale = await operator.delete(`/admin/plans/${name}`, undefined, {
      headers: { 'If-Match': '"plan-1"' },
    });
    expectProblem(stale, 412, 'PRECONDITION_FAILED');
    expect(stale.headers.etag).toBe('"plan-2"');
    await operator
      .delete(`/admin/plans/${name}`, undefined, { headers: { 'If-Match': '"plan-2"' } })
      .expect(204);
    expectProblem(await operator.get(`/admin/plans/${name}`), 404, 'PLAN_NOT_FOUND');
    // Created again, it starts over at version 1.
    expect((await putPlan(name, {}).expect(200)).headers.etag).toBe('"plan-1"');
  });

  it('refuses to delete a plan users or teams hold (409 PLAN_IN_USE with how many), not one whose entries ended', async () => {
    const name = planName('held');
    await putPlan(name, { collections: 3 }).expect(200);
    const [u1, u2, team] = [await createUser(t), await createUser(t), await createTeam(t)];
    await setUserPlans(u1, [current(name)]);
    // An entry that has not begun holds the plan too.
    await setUserPlans(u2, [{ planName: name, since: iso(HOUR), until: iso(2 * HOUR) }]);
    await setTeamPlans(team, [current(name)]);
    const refused = await operator.delete(`/admin/plans/${name}`);
    expectProblem(refused, 409, 'PLAN_IN_USE');
    expect(refused.body).toMatchObject({ profiles: 2, teams: 1 });
    await operator.get(`/admin/plans/${name}`).expect(200);

    // Entries that ended do not hold it.
    const ended = { planName: name, since: iso(-2 * HOUR), until: iso(-HOUR) };
    await setUserPlans(u1, [ended]);
    await setUserPlans(u2, []);
    await setTeamPlans(team, [ended]);
    await operator.delete(`/admin/plans/${name}`).expect(204);
  });
});

describe('team plans', () => {
  it('replaces the plans of a team, which its reads show', async () => {
    const team = await createTeam(t);
    const entry = current('team-plan', { seats: 5 });
    const res = await setTeamPlans(team, [entry]);
    const shown = { planName: 'team-plan', since: entry.since, until: entry.until };
    expect(res.body).toMatchObject({
      id: team.teamId,
      plans: [{ ...shown, metadata: { seats: 5 } }],
    });
    const read = await operator.get(`/admin/teams/${team.teamId}`).expect(200);
    expect(read.body.plans).toEqual([{ ...shown, metadata: { seats: 5 } }]);
    // The list of teams stays a summary.
    const list = await operator.get('/admin/teams', { query: { limit: '500' } }).expect(200);
    expect(list.body.find((x: { id: string }) => x.id === team.teamId)).toEqual({
      id: team.teamId,
      name: expect.any(String),
      createdAt: expect.any(String),
    });
    await setTeamPlans(team, []);
    expect((await operator.get(`/admin/teams/${team.teamId}`).expect(200)).body.plans).toEqual([]);
  });

  it('validates a team plan as a user plan, and answers 404 for no such team', async () => {
    const team = await createTeam(t);
    const res = await operator.put(`/admin/teams/${team.teamId}/plans`, [
      { planName: 'x', since: iso(HOUR), until: iso(0) },
      { planName: '', since: 'yesterday', until: iso(0) },
    ]);
    expectProblem(res, 400, 'VALIDATION_FAILED');
    expect(errorFields(res, { distinct: true })).toEqual(
      expect.arrayContaining(['0.until', '1.planName', '1.since']),
    );
    const badMetadata = await operator.put(`/admin/teams/${team.teamId}/plans`, [
      { planName: 'y', since: iso(0), until: iso(HOUR), metadata: { list: [1, 2] } },
    ]);
    expectProblem(badMetadata, 400, 'VALIDATION_FAILED');
    expect(errorFields(badMetadata)[0]).toMatch(/^0\.metadata/);
    expectProblem(
      await operator.put('/admin/teams/3f1b7a0e-9c55-4a43-a7e1-5f8f3b9d2c10/plans', []),
      404,
      'TEAM_NOT_FOUND',
    );
  });
});

describe('GET /me', () => {
  const deploymentLimits = {
    collections: { limit: 7 },
    indexesPerCollection: { limit: 4 },
    itemsPerCollection: { limit: null },
    fileBytes: { limit: 5_000_000 },
    webhooks: { limit: 6 },
    requestsPerWindow: { limit: 900 },
    streamsPerKey: { limit: 3 },
    importBytes: { limit: 2_000_000 },
  };

  it("shows no plan and the deployment's limits, with the usage it counts", async () => {
    const user = await createUser(t);
    await as(t, user).post('/data/a', { item: {} }).expect(200);
    await as(t, user)
      .post('/webhooks', { url: 'http://127.0.0.1:9/hook', events: ['created'] })
      .expect(200);
    const res = await as(t, user).get('/me').expect(200);
    expect(res.body.plan).toBeNull();
    expect(res.body.limits).toMatchObject({
      ...deploymentLimits,
      collections: { limit: 7, used: 1 },
      fileBytes: { limit: 5_000_000, used: 0 },
      webhooks: { limit: 6, used: 1 },
    });
    expect(res.body.limits.indexesPerCollection).toEqual({ limit: 4 });
    expect(res.body.limits.itemsPerCollection).toEqual({ limit: null });
    // The earlier view stays as it was.
    expect(res.body.quota).toMatchObject({
      collections: { used: 1, limit: 7 },
      indexesPerCollection: 4,
      requestsPerWindow: 900,
    });
  });

  it("shows the active plan and its limits over the deployment's, for the user's root and sub keys", async () => {
    const name = planName('starter');
    await putPlan(name, { collections: 2, itemsPerCollection: 50, fileBytes: 1000 }).expect(200);
    const user = await createUser(t);
    const sub = await createSubKey(t, user);
    const entry = current(name);
    await setUserPlans(user, [entry]);
    for (const key of [user.apiKey, sub.apiKey]) {
      const res = await as(t, key).get('/me').expect(200);
      expect(res.body.plan).toEqual({ name, since: entry.since, until: entry.until });
      expect(res.body.limits).toMatchObject({
        ...deploymentLimits,
        collections: { limit: 2, used: 0 },
        itemsPerCollection: { limit: 50 },
        fileBytes: { limit: 1000, used: 0 },
      });
    }
  });

  it('takes the latest since of several active entries, and a catalogue edit at once', async () => {
    const [base, upgrade] = [planName('base'), planName('upgrade')];
    await putPlan(base, { webhooks: 1 }).expect(200);
    await putPlan(upgrade, { webhooks: 5 }).expect(200);
    const user = await createUser(t);
    await setUserPlans(user, [
      { planName: upgrade, since: iso(-HOUR), until: iso(HOUR) },
      { planName: base, since: iso(-2 * HOUR), until: iso(48 * HOUR) },
    ]);
    const before = await as(t, user).get('/me').expect(200);
    expect(before.body.plan.name).toBe(upgrade);
    expect(before.body.limits.webhooks.limit).toBe(5);
    // The catalogue edit reaches this instance's limits with the next request.
    await putPlan(upgrade, { webhooks: 4 }).expect(200);
    expect((await as(t, user).get('/me').expect(200)).body.limits.webhooks.limit).toBe(4);
  });

  it("shows a team's plan to its key and to members acting for it, and the member's own otherwise", async () => {
    const name = planName('team');
    await putPlan(name, { collections: 3 }).expect(200);
    const team = await createTeam(t);
    const member = await createUser(t);
    await addTeamMember(t, team, member);
    await setTeamPlans(team, [current(name)]);
    for (const headers of [
      { 'X-Api-Key': team.apiKey },
      { 'X-Api-Key': member.apiKey, 'X-Team': team.teamId },
    ]) {
      const res = await t.http().get('/me').set(headers).expect(200);
      expect(res.body.plan).toMatchObject({ name });
      expect(res.body.limits.collections).toEqual({ limit: 3, used: 0 });
    }
    const own = await as(t, member).get('/me').expect(200);
    expect(own.body.plan).toBeNull();
    expect(own.body.limits.collections.limit).toBe(7);
  });

  it("gives an entry naming a plan the catalogue lacks the deployment's limits", async () => {
    const user = await createUser(t);
    await setUserPlans(user, [current('not-in-catalogue')]);
    const res = await as(t, user).get('/me').expect(200);
    expect(res.body.plan).toMatchObject({ name: 'not-in-catalogue' });
    expect(res.body.limits).toMatchObject(deploymentLimits);
  });

  it("shows the operator no plan and the deployment's limits without use", async () => {
    const res = await operator.get('/me').expect(200);
    expect(res.body.plan).toBeNull();
    expect(res.body.limits).toEqual(deploymentLimits);
  });
});
