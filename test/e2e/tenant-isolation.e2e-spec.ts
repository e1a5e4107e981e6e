import { createTestApp, TEST_ADMIN_KEY, type TestApp } from '../support/app';
import {
  createSubKey,
  createTeam,
  createUser,
  type TestTeam,
  type TestUser,
} from '../support/factories';

/**
 * Namespaces are keyed by (kind, id): a user whose subject equals a team's id (the operator API
 * accepts any subject) shares nothing with that team, on any route.
 */
let t: TestApp;
beforeAll(async () => {
  t = await createTestApp(__filename);
});
afterAll(async () => t.close());

const as = (key: string) => ({ 'X-Api-Key': key });

describe('a user whose subject equals a team id', () => {
  let team: TestTeam;
  let user: TestUser;
  let teamProjectId: string;

  beforeAll(async () => {
    team = await createTeam(t);
    user = await createUser(t, { subject: team.teamId });
    await t
      .http()
      .post('/data/payroll')
      .set(as(team.apiKey))
      .send({ item: { _id: 'p1', salary: 123456 } })
      .expect(200);
    await t
      .http()
      .post('/data/payroll/index')
      .set(as(team.apiKey))
      .send({ field: 'salary' })
      .expect(200);
    const project = await t
      .http()
      .post('/project')
      .set(as(team.apiKey))
      .send({ name: 'Team secret' })
      .expect(200);
    teamProjectId = project.body.id as string;
  });

  it('exists as its own user (the operator API accepted the subject)', () => {
    expect(user.subject).toBe(team.teamId);
  });

  it("does not see the team's collections in GET /data", async () => {
    const res = await t.http().get('/data').set(as(user.apiKey)).expect(200);
    expect(res.body).toEqual([]);
  });

  it("cannot list, count or read the team's items", async () => {
    await t.http().get('/data/payroll').set(as(user.apiKey)).expect(204);
    const count = await t.http().get('/data/payroll/count').set(as(user.apiKey)).expect(200);
    expect(count.body).toEqual({ count: 0 });
    const byId = await t.http().get('/data/payroll/_id/p1').set(as(user.apiKey)).expect(404);
    expect(byId.body.code).toBe('ITEM_NOT_FOUND');
    await t.http().get('/data/payroll/salary/123456').set(as(user.apiKey)).expect(404);
  });

  it("cannot update or delete the team's items", async () => {
    await t
      .http()
      .put('/data/payroll/salary/123456')
      .set(as(user.apiKey))
      .send({ values: { salary: 1 } })
      .expect(404);
    await t.http().delete('/data/payroll/_id/p1').set(as(user.apiKey)).expect(404);
    const res = await t.http().get('/data/payroll/_id/p1').set(as(team.apiKey)).expect(200);
    expect(res.body.salary).toBe(123456);
  });

  it("cannot see or drop the team's indexes", async () => {
    const list = await t.http().get('/data/payroll/index').set(as(user.apiKey)).expect(200);
    expect(list.body).toEqual([]);
    const drop = await t
      .http()
      .delete('/data/payroll/index')
      .set(as(user.apiKey))
      .send({ name: 'salary_1' })
      .expect(404);
    expect(drop.body.code).toBe('INDEX_NOT_FOUND');
    const teamList = await t.http().get('/data/payroll/index').set(as(team.apiKey)).expect(200);
    expect(teamList.body.map((i: { name: string }) => i.name)).toEqual(['_id_', 'salary_1']);
  });

  it('gets a collection of the same name of its own, and the two stay apart', async () => {
    await t
      .http()
      .post('/data/payroll')
      .set(as(user.apiKey))
      .send({ item: { _id: 'p1', salary: 1 } })
      .expect(200);
    const mine = await t.http().get('/data/payroll').set(as(user.apiKey)).expect(200);
    expect(mine.body.map((i: { salary: number }) => i.salary)).toEqual([1]);
    const theirs = await t.http().get('/data/payroll').set(as(team.apiKey)).expect(200);
    expect(theirs.body.map((i: { salary: number }) => i.salary)).toEqual([123456]);
    const teamCollections = await t.http().get('/data').set(as(team.apiKey)).expect(200);
    expect(teamCollections.body.map((c: { name: string }) => c.name)).toEqual(['payroll']);
  });

  it("gives its sub keys no way into the team's namespace", async () => {
    const sub = await createSubKey(t, user, { accountId: team.teamId });
    const own = await t.http().get('/data/payroll/_id/p1').set(as(sub.apiKey)).expect(200);
    expect(own.body.salary).toBe(1);
    const res = await t.http().get('/data/payroll').set(as(sub.apiKey)).expect(200);
    // The user's own item is stamped with the user's subject, which the accountId equals; the
    // team's item with salary 123456 never appears.
    expect(res.body.map((i: { salary: number }) => i.salary)).toEqual([1]);
  });

  it("cannot read, change or delete the team's projects", async () => {
    const list = await t.http().get('/project').set(as(user.apiKey)).expect(200);
    expect(list.body).toEqual([]);
    await t.http().get(`/project/${teamProjectId}`).set(as(user.apiKey)).expect(404);
    await t
      .http()
      .put(`/project/${teamProjectId}`)
      .set(as(user.apiKey))
      .send({ name: 'taken' })
      .expect(404);
    await t.http().delete(`/project/${teamProjectId}`).set(as(user.apiKey)).expect(404);
    const res = await t.http().get(`/project/${teamProjectId}`).set(as(team.apiKey)).expect(200);
    expect(res.body.name).toBe('Team secret');
  });

  it("cannot list or revoke the team's key", async () => {
    const teamKey = await t.connection
      .collection('api_keys')
      .findOne({ kind: 'team', teamId: team.teamId });
    expect(teamKey).not.toBeNull();
    const list = await t.http().get('/api-keys').set(as(user.apiKey)).expect(200);
    const kinds = (list.body as { kind: string }[]).map((k) => k.kind);
    expect(kinds).not.toContain('team');
    await t
      .http()
      .delete(`/api-keys/${teamKey?._id.toHexString()}`)
      .set(as(user.apiKey))
      .expect(404);
    await t.http().get('/data').set(as(team.apiKey)).expect(200);
  });

  it('has its own profile, and the team has none', async () => {
    const res = await t.http().get('/profile').set(as(user.apiKey)).expect(200);
    expect(res.body.subject).toBe(team.teamId);
    await t.http().get('/profile').set(as(team.apiKey)).expect(403);
  });
});

describe('a team whose id is a prefix of a subject, and the reverse', () => {
  it('keeps the namespaces of every pair apart', async () => {
    const team = await createTeam(t);
    const longer = await createUser(t, { subject: `${team.teamId}x` });
    const shorter = await createUser(t, { subject: team.teamId.slice(0, 8) });
    for (const [key, marker] of [
      [team.apiKey, 'team'],
      [longer.apiKey, 'longer'],
      [shorter.apiKey, 'shorter'],
    ] as const) {
      await t.http().post('/data/shared').set(as(key)).send({ item: { marker } }).expect(200);
    }
    for (const [key, marker] of [
      [team.apiKey, 'team'],
      [longer.apiKey, 'longer'],
      [shorter.apiKey, 'shorter'],
    ] as const) {
      const res = await t.http().get('/data/shared').set(as(key)).expect(200);
      expect(res.body.map((i: { marker: string }) => i.marker)).toEqual([marker]);
    }
  });
});

describe('the operator API', () => {
  it('still refuses a subject that is taken (409)', async () => {
    const user = await createUser(t);
    const res = await t
      .http()
      .post('/admin/users')
      .set(as(TEST_ADMIN_KEY))
      .send({ email: 'another@example.com', subject: user.subject })
      .expect(409);
    expect(res.body.code).toBe('DUPLICATE_USER');
  });
});
