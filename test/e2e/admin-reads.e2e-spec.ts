import { createTestApp, type TestApp } from '../support/app';
import {
  addTeamMember,
  createApiKey,
  createSubKey,
  createTeam,
  createUser,
  type TestTeam,
  type TestUser,
} from '../support/factories';
import { anonymous, as, asOperator } from '../support/http';
import { collectPages, ids, linkTarget, pluck } from '../support/paging';
import { expectInvalid, expectProblem } from '../support/problems';

/**
 * The operator's reads: GET /admin/teams, GET /admin/teams/{id}, GET /admin/users and
 * GET /admin/users/{subject}. This file's database holds only what it creates, so lists are
 * compared with exactly what was made.
 */
let t: TestApp;
let users: TestUser[];
let teams: TestTeam[];

beforeAll(async () => {
  t = await createTestApp(__filename);
  users = [];
  // Created out of subject order, so the list order is the service's, not the creation order.
  for (const i of [3, 0, 4, 1, 2])
    users.push(await createUser(t, { subject: `reader-${i}`, email: `Reader-${i}@Example.com` }));
  // users[i] is reader-i.
  users.sort((a, b) => a.subject.localeCompare(b.subject));
  teams = [];
  for (let i = 0; i < 7; i += 1) teams.push(await createTeam(t, `team-${i}`));
});
afterAll(async () => t.close());

/** Every customer key kind, for the 403 checks of operator routes. */
async function customerKeys(): Promise<string[]> {
  const sub = await createSubKey(t, users[0]!);
  return [users[0]!.apiKey, teams[0]!.apiKey, sub.apiKey];
}

describe('GET /admin/teams', () => {
  const allIds = () => teams.map((team) => team.teamId).sort();

  it('lists every team by id, with the default limit and no Link when one page holds them', async () => {
    const res = await asOperator(t).get('/admin/teams').expect(200);
    expect(ids(res)).toEqual(allIds());
    expect(res.headers.link).toBeUndefined();
    const byId = new Map(teams.map((team, i) => [team.teamId, `team-${i}`]));
    for (const entry of res.body as { id: string; name: string; createdAt: string }[])
      expect(entry).toEqual({
        id: entry.id,
        name: byId.get(entry.id),
        createdAt: expect.stringMatching(/^\d{4}-\d\d-\d\dT/),
      });
  });

  it('walks every team exactly once through Link, limit by limit', async () => {
    const pages = await collectPages(asOperator(t), '/admin/teams?limit=3');
    expect(pages.map((page) => ids(page).length)).toEqual([3, 3, 1]);
    expect(pages.flatMap((page) => ids(page))).toEqual(allIds());
    expect(linkTarget(pages[0]!)).toBe(
      `/admin/teams?limit=3&after%5Bid%5D=${encodeURIComponent(allIds()[2]!)}`,
    );
    // The cursor alone: the teams after that one.
    const afterThird = await asOperator(t)
      .get(`/admin/teams?after[id]=${allIds()[2]!}`)
      .expect(200);
    expect(ids(afterThird)).toEqual(allIds().slice(3));
  });

  it('refuses other parameters, other cursors and bad limits (400)', async () => {
    const uuid = teams[0]!.teamId;
    for (const [query, field] of [
      ['sort=name', 'sort'],
      ['after[name]=x', 'after[name]'],
      ['after[id]=nope', 'after[id]'],
      [`before[id]=${uuid}`, 'before[id]'],
      ['name=team-1', 'name'],
      ['filter[name]=team-1', 'filter[name]'],
      ['limit=0', 'limit'],
      ['limit=501', 'limit'],
      ['limit=ten', 'limit'],
    ])
      expectInvalid(await asOperator(t).get(`/admin/teams?${query}`), field!);
  });

  it('is for the operator only', async () => {
    expectProblem(await anonymous(t).get('/admin/teams'), 401, 'UNAUTHENTICATED');
    for (const key of await customerKeys())
      expectProblem(await as(t, key).get('/admin/teams'), 403, 'FORBIDDEN');
  });
});

describe('GET /admin/teams/{id}', () => {
  it('shows a team with its members in the order they joined', async () => {
    const team = teams[1]!;
    await addTeamMember(t, team, users[2]!, 'admin');
    await addTeamMember(t, team, users[0]!, 'member');
    const res = await asOperator(t).get(`/admin/teams/${team.teamId}`).expect(200);
    expect(res.body).toEqual({
      id: team.teamId,
      name: 'team-1',
      createdAt: expect.any(String),
      plans: [],
      members: [
        { subject: users[2]!.subject, role: 'admin', createdAt: expect.any(String) },
        { subject: users[0]!.subject, role: 'member', createdAt: expect.any(String) },
      ],
    });
    const empty = await asOperator(t).get(`/admin/teams/${teams[2]!.teamId}`).expect(200);
    expect(empty.body.members).toEqual([]);
  });

  it('answers 404 TEAM_NOT_FOUND for an unknown team', async () => {
    for (const id of ['00000000-0000-4000-8000-000000000000', 'not-a-team'])
      expectProblem(await asOperator(t).get(`/admin/teams/${id}`), 404, 'TEAM_NOT_FOUND');
  });

  it('is for the operator only', async () => {
    const path = `/admin/teams/${teams[0]!.teamId}`;
    expectProblem(await anonymous(t).get(path), 401, 'UNAUTHENTICATED');
    for (const key of await customerKeys())
      expectProblem(await as(t, key).get(path), 403, 'FORBIDDEN');
  });
});

describe('GET /admin/users', () => {
  const subjects = ['reader-0', 'reader-1', 'reader-2', 'reader-3', 'reader-4'];

  it('walks every user exactly once, by subject, through Link', async () => {
    const pages = await collectPages(asOperator(t), '/admin/users?limit=2');
    expect(pages.map((page) => page.body.length as number)).toEqual([2, 2, 1]);
    expect(pages.flatMap((page) => pluck(page, 'subject'))).toEqual(subjects);
    expect(linkTarget(pages[0]!)).toBe('/admin/users?limit=2&after%5Bsubject%5D=reader-1');
    const all = await asOperator(t).get('/admin/users').expect(200);
    expect(pluck(all, 'subject')).toEqual(subjects);
    expect(all.headers.link).toBeUndefined();
    expect(all.body[0]).toEqual({
      subject: 'reader-0',
      email: 'reader-0@example.com',
      createdAt: expect.stringMatching(/^\d{4}-\d\d-\d\dT/),
    });
  });

  it('finds a user by email, whatever its case, and pages within the filter', async () => {
    const res = await asOperator(t)
      .get('/admin/users', { query: { email: 'READER-3@example.COM' } })
      .expect(200);
    expect(pluck(res, 'subject')).toEqual(['reader-3']);
    await asOperator(t).get('/admin/users?email=none@example.com').expect(200, []);
    // The email filter and the cursor together: nothing after the only match.
    await asOperator(t)
      .get('/admin/users?email=reader-3@example.com&after[subject]=reader-3')
      .expect(200, []);
  });

  it('finds the users whose email starts with a prefix, whatever its case, by subject', async () => {
    const all = await asOperator(t).get('/admin/users?emailPrefix=READER-').expect(200);
    expect(pluck(all, 'subject')).toEqual(subjects);
    const one = await asOperator(t).get('/admin/users?emailPrefix=reader-2@').expect(200);
    expect(pluck(one, 'subject')).toEqual(['reader-2']);
    // A prefix is not a pattern: characters a regular expression would read are plain.
    await asOperator(t).get('/admin/users?emailPrefix=reader-.*').expect(200, []);
    await asOperator(t).get('/admin/users?emailPrefix=eader').expect(200, []);
    const pages = await collectPages(asOperator(t), '/admin/users?emailPrefix=reader&limit=2');
    expect(pages.flatMap((page) => pluck(page, 'subject'))).toEqual(subjects);
    // With an email too: that user, if its email starts so.
    const both = '/admin/users?email=reader-1@example.com&emailPrefix=';
    expect(pluck(await asOperator(t).get(`${both}READER`).expect(200), 'subject')).toEqual([
      'reader-1',
    ]);
    await asOperator(t).get(`${both}other`).expect(200, []);
  });

  it('refuses other parameters, cursors and bad values (400)', async () => {
    for (const [query, field] of [
      ['emailPrefix=', 'emailPrefix'],
      ['sort=email', 'sort'],
      ['after[email]=x', 'after[email]'],
      ['after[subject]=has space', 'after[subject]'],
      ['subject=reader-1', 'subject'],
      ['limit=501', 'limit'],
      ['email=', 'email'],
      [`email=${'a'.repeat(250)}@x.io`, 'email'],
    ])
      expectInvalid(await asOperator(t).get(`/admin/users?${query}`), field!);
  });

  it('is for the operator only', async () => {
    expectProblem(await anonymous(t).get('/admin/users'), 401, 'UNAUTHENTICATED');
    for (const key of await customerKeys())
      expectProblem(await as(t, key).get('/admin/users'), 403, 'FORBIDDEN');
  });
});

describe('GET /admin/erasures', () => {
  it('lists every erasure newest first, through Link, running or done', async () => {
    const started: string[] = [];
    for (const i of [0, 1, 2]) {
      const doomed = await createUser(t, { subject: `erased-${i}` });
      const res = await asOperator(t).delete(`/admin/users/${doomed.subject}`).expect(202);
      started.push(res.body.id as string);
    }
    const pages = await collectPages(asOperator(t), '/admin/erasures?limit=2');
    const listed = pages.flatMap((page) => ids(page));
    // Newest first; this file's database has no other erasures.
    expect(listed).toEqual([...started].reverse());
    const first = (await asOperator(t).get('/admin/erasures').expect(200)).body[0];
    const one = await asOperator(t).get(`/admin/erasures/${first.id}`).expect(200);
    expect(first).toMatchObject({ id: one.body.id, kind: 'user' });
  });

  it('refuses other parameters and cursors (400), and is for the operator only', async () => {
    for (const [query, field] of [
      ['after[id]=nope', 'after[id]'],
      ['sort=id', 'sort'],
      ['status=done', 'status'],
    ])
      expectInvalid(await asOperator(t).get(`/admin/erasures?${query}`), field!);
    expectProblem(await anonymous(t).get('/admin/erasures'), 401, 'UNAUTHENTICATED');
    for (const key of await customerKeys())
      expectProblem(await as(t, key).get('/admin/erasures'), 403, 'FORBIDDEN');
  });
});

describe('GET /admin/users/{subject}', () => {
  it('shows the profile, key metadata, teams and collection quota of the standard branch', async () => {
    const user = users[1]!;
    const sub = await createSubKey(t, user, { clientId: 'web', accountId: 'acct-reader' });
    const named = await createApiKey(t, user, { name: 'ci', branch: 'staging' });
    const team = teams[3]!;
    await addTeamMember(t, team, user, 'admin');
    for (const name of ['a', 'b'])
      await as(t, user).post(`/data/${name}`, { item: {} }).expect(200);
    await as(t, user).post('/data/c', { item: {} }, { branch: 'staging' }).expect(200);
    // Another user's and the team's collections are not the user's.
    await as(t, users[2]!).post('/data/d', { item: {} }).expect(200);
    await as(t, team).post('/data/e', { item: {} }).expect(200);

    const res = await asOperator(t).get(`/admin/users/${user.subject}`).expect(200);
    expect(res.body.profile).toMatchObject({
      subject: user.subject,
      email: 'reader-1@example.com',
    });
    const keys = res.body.keys as { id: string; kind: string; name: string; branch: string }[];
    expect(keys.map((k) => k.kind).sort()).toEqual(['root', 'root', 'sub']);
    expect(keys.find((k) => k.id === named.key.id)).toMatchObject({
      name: 'ci',
      branch: 'staging',
    });
    const serialized = JSON.stringify(res.body);
    for (const secret of [user.apiKey, sub.apiKey, named.apiKey])
      expect(serialized).not.toContain(secret);
    expect(serialized).not.toMatch(/digest/i);
    expect(res.body.teams).toEqual([{ teamId: team.teamId, name: 'team-3', role: 'admin' }]);
    expect(res.body.quota).toEqual({
      collections: { used: 2, limit: t.config.limits.maxCollections },
    });
  });

  it('answers for a subject that needs escaping in the path', async () => {
    const user = await createUser(t, { subject: 'auth0|5f7c8ec7' });
    const res = await asOperator(t)
      .get(`/admin/users/${encodeURIComponent(user.subject)}`)
      .expect(200);
    expect(res.body).toMatchObject({
      profile: { subject: 'auth0|5f7c8ec7' },
      teams: [],
      quota: { collections: { used: 0 } },
    });
    expect(res.body.keys).toHaveLength(1);
  });

  it('answers 404 PROFILE_NOT_FOUND for an unknown user', async () => {
    expectProblem(await asOperator(t).get('/admin/users/nobody'), 404, 'PROFILE_NOT_FOUND');
  });

  it('is for the operator only', async () => {
    const path = `/admin/users/${users[0]!.subject}`;
    expectProblem(await anonymous(t).get(path), 401, 'UNAUTHENTICATED');
    for (const key of await customerKeys())
      expectProblem(await as(t, key).get(path), 403, 'FORBIDDEN');
  });
});
