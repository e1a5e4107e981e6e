import type { OpenAPIV3 } from 'openapi-types';
import { createTestApp, TEST_ADMIN_KEY, type TestApp } from '../support/app';
import {
  addTeamMember,
  createApiKey,
  createProject,
  createSubKey,
  createTeam,
  createUser,
  type TestTeam,
  type TestUser,
} from '../support/factories';
import {
  anonymous,
  as,
  asOperator,
  type Client,
  type KeyHolder,
  type RequestOptions,
} from '../support/http';
import { ids } from '../support/paging';
import { expectInvalid, expectProblem } from '../support/problems';

/**
 * Team memberships: the operator's PUT/DELETE of members, X-Team (a member's root key acting for
 * the team), GET /teams, and team key management by admin members.
 */
let t: TestApp;
let team: TestTeam;
let otherTeam: TestTeam;
let admin: TestUser;
let member: TestUser;
let outsider: TestUser;

const UNKNOWN_TEAM = '00000000-0000-4000-8000-000000000000';

/** A client sending `key` (a member's root key, unless a refusal is tested) with `X-Team`. */
function actingFor(key: KeyHolder, teamId: string): Client {
  const client = as(t, key);
  const withTeam = (options: RequestOptions = {}): RequestOptions => ({
    ...options,
    headers: { ...options.headers, 'X-Team': teamId },
  });
  return {
    get: (path, options) => client.get(path, withTeam(options)),
    post: (path, body, options) => client.post(path, body, withTeam(options)),
    put: (path, body, options) => client.put(path, body, withTeam(options)),
    delete: (path, body, options) => client.delete(path, body, withTeam(options)),
    raw: (method, path, json, options) => client.raw(method, path, json, withTeam(options)),
  };
}

beforeAll(async () => {
  t = await createTestApp(__filename);
  team = await createTeam(t, 'platform');
  otherTeam = await createTeam(t, 'other');
  admin = await createUser(t);
  member = await createUser(t);
  outsider = await createUser(t);
  await addTeamMember(t, team, admin, 'admin');
  await addTeamMember(t, team, member, 'member');
});
afterAll(async () => t.close());

describe('PUT and DELETE /admin/teams/{id}/members/{subject}', () => {
  it('adds a member, changes its role in place and removes it', async () => {
    const joining = await createUser(t);
    const path = `/admin/teams/${otherTeam.teamId}/members/${joining.subject}`;
    const added = await asOperator(t).put(path, { role: 'member' }).expect(200);
    expect(added.body).toEqual({
      subject: joining.subject,
      role: 'member',
      createdAt: expect.any(String),
    });
    const promoted = await asOperator(t).put(path, { role: 'admin' }).expect(200);
    expect(promoted.body).toEqual({ ...added.body, role: 'admin' });

    const detail = await asOperator(t).get(`/admin/teams/${otherTeam.teamId}`).expect(200);
    expect(detail.body.members).toEqual([promoted.body]);

    await asOperator(t).delete(path).expect(204);
    const after = await asOperator(t).get(`/admin/teams/${otherTeam.teamId}`).expect(200);
    expect(after.body.members).toEqual([]);
    expectProblem(await asOperator(t).delete(path), 404, 'MEMBER_NOT_FOUND');
  });

  it('answers 404 for an unknown team, user or member, and adds nobody', async () => {
    expectProblem(
      await asOperator(t).put(`/admin/teams/${UNKNOWN_TEAM}/members/${outsider.subject}`, {
        role: 'member',
      }),
      404,
      'TEAM_NOT_FOUND',
    );
    expectProblem(
      await asOperator(t).put(`/admin/teams/${team.teamId}/members/nobody`, { role: 'member' }),
      404,
      'PROFILE_NOT_FOUND',
    );
    expectProblem(
      await asOperator(t).delete(`/admin/teams/${UNKNOWN_TEAM}/members/${member.subject}`),
      404,
      'TEAM_NOT_FOUND',
    );
    expectProblem(
      await asOperator(t).delete(`/admin/teams/${team.teamId}/members/${outsider.subject}`),
      404,
      'MEMBER_NOT_FOUND',
    );
    const detail = await asOperator(t).get(`/admin/teams/${team.teamId}`).expect(200);
    expect((detail.body.members as { subject: string }[]).map((m) => m.subject)).toEqual([
      admin.subject,
      member.subject,
    ]);
  });

  it('refuses a body without one valid role (400)', async () => {
    const path = `/admin/teams/${team.teamId}/members/${outsider.subject}`;
    for (const body of [{}, { role: 'owner' }, { role: null }, { role: 'ADMIN' }])
      expectInvalid(await asOperator(t).put(path, body), 'role');
    expectInvalid(await asOperator(t).put(path, { role: 'member', since: 'now' }), 'since');
    expectProblem(await asOperator(t).put(path, ['member']), 400, 'VALIDATION_FAILED');
    const detail = await asOperator(t).get(`/admin/teams/${team.teamId}`).expect(200);
    expect(detail.body.members).toHaveLength(2);
  });

  it('is for the operator only (401 without a key, 403 for customer keys)', async () => {
    const path = `/admin/teams/${team.teamId}/members/${outsider.subject}`;
    expectProblem(await anonymous(t).put(path, { role: 'member' }), 401, 'UNAUTHENTICATED');
    expectProblem(await anonymous(t).delete(path), 401, 'UNAUTHENTICATED');
    const sub = await createSubKey(t, admin);
    for (const key of [admin.apiKey, team.apiKey, sub.apiKey]) {
      expectProblem(await as(t, key).put(path, { role: 'admin' }), 403, 'FORBIDDEN');
      expectProblem(
        await as(t, key).delete(`/admin/teams/${team.teamId}/members/${member.subject}`),
        403,
        'FORBIDDEN',
      );
    }
    const detail = await asOperator(t).get(`/admin/teams/${team.teamId}`).expect(200);
    expect(detail.body.members).toHaveLength(2);
  });
});

describe('X-Team', () => {
  it('lets a member root key act in the team namespace, as the team key does', async () => {
    const project = await actingFor(member, team.teamId)
      .post('/project', { name: 'via member' })
      .expect(200);
    expect(project.body).toMatchObject({ teamId: team.teamId, userId: '' });
    await as(t, team).get(`/project/${project.body.id}`).expect(200);
    expectProblem(await as(t, member).get(`/project/${project.body.id}`), 404, 'PROJECT_NOT_FOUND');
    const byTeamKey = await createProject(t, team, { name: 'via team key' });
    const listed = await actingFor(member, team.teamId).get('/project').expect(200);
    expect(ids(listed).sort()).toEqual([project.body.id, byTeamKey.id].sort());
    const own = await as(t, member).get('/project').expect(200);
    expect(ids(own)).not.toContain(project.body.id);

    const item = await actingFor(member, team.teamId)
      .post('/data/board', { item: { _id: 'card-1', text: 'hello' } })
      .expect(200);
    expect(item.body).toMatchObject({ _id: 'card-1', userId: team.teamId });
    const seen = await as(t, team).get('/data/board/_id/card-1').expect(200);
    expect(seen.body.text).toBe('hello');
    await actingFor(admin, team.teamId).get('/data/board/_id/card-1').expect(200);
    expectProblem(await as(t, member).get('/data/board/_id/card-1'), 404, 'ITEM_NOT_FOUND');

    const me = await actingFor(member, team.teamId).get('/me').expect(200);
    expect(me.body).toMatchObject({
      kind: 'team',
      teamId: team.teamId,
      actingSubject: member.subject,
      branch: '',
    });
    const plain = await as(t, member).get('/me').expect(200);
    expect(plain.body).toMatchObject({ kind: 'root', subject: member.subject });
    expect(plain.body.actingSubject).toBeUndefined();
  });

  it("keeps another team's projects and data out of reach", async () => {
    const theirs = await createProject(t, otherTeam, { name: 'theirs' });
    await as(t, otherTeam)
      .post('/data/vault', { item: { _id: 'secret' } })
      .expect(200);
    await actingFor(member, team.teamId)
      .post('/data/vault', { item: { _id: 'ours' } })
      .expect(200);

    expectProblem(
      await actingFor(member, team.teamId).get(`/project/${theirs.id}`),
      404,
      'PROJECT_NOT_FOUND',
    );
    expectProblem(
      await actingFor(member, team.teamId).get('/data/vault/_id/secret'),
      404,
      'ITEM_NOT_FOUND',
    );
    const ours = await actingFor(member, team.teamId).get('/data/vault').expect(200);
    expect(ids(ours, '_id')).toEqual(['ours']);
    expectProblem(await as(t, otherTeam).get('/data/vault/_id/ours'), 404, 'ITEM_NOT_FOUND');
    // Membership of one team opens no other.
    expectProblem(await actingFor(member, otherTeam.teamId).get('/data/vault'), 403, 'FORBIDDEN');
  });

  it('keeps branches apart, with the branch rules of the key', async () => {
    await actingFor(member, team.teamId)
      .post('/data/branchy', { item: { _id: 'staged' } }, { branch: 'staging' })
      .expect(200);
    await as(t, team).get('/data/branchy/_id/staged', { branch: 'staging' }).expect(200);
    expectProblem(await as(t, team).get('/data/branchy/_id/staged'), 404, 'ITEM_NOT_FOUND');
    expectProblem(
      await actingFor(member, team.teamId).get('/data/branchy/_id/staged'),
      404,
      'ITEM_NOT_FOUND',
    );

    // A member's root key bound to a branch acts for the team in that branch only.
    const bound = await createApiKey(t, member, { branch: 'staging' });
    const boundClient = actingFor(bound.apiKey, team.teamId);
    await boundClient.get('/data/branchy/_id/staged').expect(200);
    const me = await boundClient.get('/me').expect(200);
    expect(me.body).toMatchObject({
      kind: 'team',
      teamId: team.teamId,
      branch: 'staging',
      boundBranch: 'staging',
      actingSubject: member.subject,
    });
    expectProblem(await boundClient.get('/data/branchy', { branch: '' }), 403, 'BRANCH_MISMATCH');
  });

  it('refuses a user that is not a member of the team (403), saying why', async () => {
    const res = await actingFor(outsider, team.teamId).get('/data/board');
    expectProblem(res, 403, 'FORBIDDEN');
    expect(res.body.detail).toMatch(/not a member of team/);
    expectProblem(await actingFor(member, UNKNOWN_TEAM).get('/data/board'), 403, 'FORBIDDEN');
  });

  it('refuses X-Team with a sub, team or operator key (403)', async () => {
    const sub = await createSubKey(t, member);
    for (const key of [sub.apiKey, team.apiKey, TEST_ADMIN_KEY]) {
      const res = await actingFor(key, team.teamId).get('/me');
      expectProblem(res, 403, 'FORBIDDEN');
      expect(res.body.detail).toMatch(/X-Team is for root keys/);
    }
    expectProblem(
      await actingFor(team, team.teamId).post('/data/board', { item: {} }),
      403,
      'FORBIDDEN',
    );
  });

  it('refuses an X-Team that is not one team id like a team of someone else (403)', async () => {
    for (const value of [
      'platform',
      '',
      team.teamId.toUpperCase(),
      `${team.teamId},${team.teamId}`,
    ]) {
      const res = await t
        .http()
        .get('/data/board')
        .set('X-Api-Key', member.apiKey)
        .set('X-Team', value);
      expectProblem(res, 403, 'FORBIDDEN');
      expect(res.body.detail).toMatch(/not a member of team/);
    }
    const twice = await t
      .http()
      .get('/data/board')
      .set('X-Api-Key', member.apiKey)
      // An array is sent as two header lines (the typings only admit it for Cookie).
      .set('X-Team', [team.teamId, team.teamId] as unknown as string);
    expectProblem(twice, 403, 'FORBIDDEN');
  });

  it('keeps root-only routes closed while acting for a team', async () => {
    for (const path of ['/profile', '/api-keys', '/teams'])
      expectProblem(await actingFor(member, team.teamId).get(path), 403, 'FORBIDDEN');
  });

  it('stops working with the next request once the membership is removed', async () => {
    const leaving = await createUser(t);
    await addTeamMember(t, team, leaving, 'member');
    await actingFor(leaving, team.teamId).get('/data/board').expect(200);
    await asOperator(t)
      .delete(`/admin/teams/${team.teamId}/members/${leaving.subject}`)
      .expect(204);
    expectProblem(await actingFor(leaving, team.teamId).get('/data/board'), 403, 'FORBIDDEN');
    await as(t, leaving).get('/teams').expect(200, []);
    // The user's own namespace is untouched.
    await as(t, leaving).get('/me').expect(200);
  });
});

describe('GET /teams', () => {
  it("lists the caller's teams with its role in each", async () => {
    const both = await createUser(t);
    await addTeamMember(t, team, both, 'member');
    await addTeamMember(t, otherTeam, both, 'admin');
    const res = await as(t, both).get('/teams').expect(200);
    const byId = (a: { teamId: string }, b: { teamId: string }) => a.teamId.localeCompare(b.teamId);
    expect([...(res.body as { teamId: string }[])].sort(byId)).toEqual(
      [
        { teamId: team.teamId, name: 'platform', role: 'member' },
        { teamId: otherTeam.teamId, name: 'other', role: 'admin' },
      ].sort(byId),
    );
    await as(t, admin)
      .get('/teams')
      .expect(200, [{ teamId: team.teamId, name: 'platform', role: 'admin' }]);
    await as(t, outsider).get('/teams').expect(200, []);
  });

  it('is for root keys (401 without a key, 403 for others)', async () => {
    expectProblem(await anonymous(t).get('/teams'), 401, 'UNAUTHENTICATED');
    const sub = await createSubKey(t, admin);
    for (const key of [team.apiKey, sub.apiKey, TEST_ADMIN_KEY])
      expectProblem(await as(t, key).get('/teams'), 403, 'FORBIDDEN');
  });
});

describe('/teams/{id}/api-keys', () => {
  const keysOf = (teamId: string) => `/teams/${teamId}/api-keys`;

  it("lists the team's keys without secrets", async () => {
    const first = await as(t, team).get('/me').expect(200);
    const other = await as(t, otherTeam).get('/me').expect(200);
    const res = await as(t, admin).get(keysOf(team.teamId)).expect(200);
    expect(ids(res)).toContain(first.body.key.id);
    expect(ids(res)).not.toContain(other.body.key.id);
    for (const key of res.body as { kind: string }[]) expect(key.kind).toBe('team');
    expect(JSON.stringify(res.body)).not.toContain(team.apiKey);
    expect(JSON.stringify(res.body)).not.toMatch(/digest|secret/i);
  });

  it('lets an admin member mint a team key, which acts for the team, and revoke it', async () => {
    const minted = await as(t, admin)
      .post(keysOf(team.teamId), {
        name: 'ci',
        branch: 'staging',
        expiresAt: '2099-01-01T00:00:00Z',
      })
      .expect(200);
    expect(minted.body).toEqual({
      key: expect.objectContaining({
        kind: 'team',
        name: 'ci',
        branch: 'staging',
        expiresAt: '2099-01-01T00:00:00.000Z',
      }),
      apiKey: expect.stringMatching(/^pds_/),
    });
    const apiKey = minted.body.apiKey as string;
    await as(t, apiKey)
      .post('/data/ci', { item: { _id: 'from-ci' } })
      .expect(200);
    await as(t, team).get('/data/ci/_id/from-ci', { branch: 'staging' }).expect(200);
    const me = await as(t, apiKey).get('/me').expect(200);
    expect(me.body).toMatchObject({ kind: 'team', teamId: team.teamId, boundBranch: 'staging' });

    const listed = await as(t, admin).get(keysOf(team.teamId)).expect(200);
    expect(ids(listed)).toContain(minted.body.key.id);
    expect(JSON.stringify(listed.body)).not.toContain(apiKey);

    await as(t, admin)
      .delete(`${keysOf(team.teamId)}/${minted.body.key.id}`)
      .expect(204);
    expectProblem(await as(t, apiKey).get('/me'), 401, 'UNAUTHENTICATED');
    const after = await as(t, admin).get(keysOf(team.teamId)).expect(200);
    expect(ids(after)).not.toContain(minted.body.key.id);
    expectProblem(
      await as(t, admin).delete(`${keysOf(team.teamId)}/${minted.body.key.id}`),
      404,
      'API_KEY_NOT_FOUND',
    );
  });

  it('mints an unnamed, unbound key without a body', async () => {
    const minted = await as(t, admin).post(keysOf(team.teamId)).expect(200);
    expect(minted.body.key).toMatchObject({ kind: 'team', name: '', branch: null });
    await as(t, minted.body.apiKey as string)
      .get('/me')
      .expect(200);
  });

  it('refuses a member (403) and a non-member or unknown team (404)', async () => {
    const path = keysOf(team.teamId);
    const first = await as(t, team).get('/me').expect(200);
    const keyPath = `${path}/${first.body.key.id}`;
    expectProblem(await as(t, member).get(path), 403, 'FORBIDDEN');
    expectProblem(await as(t, member).post(path, {}), 403, 'FORBIDDEN');
    expectProblem(await as(t, member).delete(keyPath), 403, 'FORBIDDEN');
    expectProblem(await as(t, outsider).get(path), 404, 'TEAM_NOT_FOUND');
    expectProblem(await as(t, outsider).post(path, {}), 404, 'TEAM_NOT_FOUND');
    expectProblem(await as(t, outsider).delete(keyPath), 404, 'TEAM_NOT_FOUND');
    // An admin of one team is nobody in another; an unknown team looks the same.
    expectProblem(await as(t, admin).get(keysOf(otherTeam.teamId)), 404, 'TEAM_NOT_FOUND');
    expectProblem(await as(t, admin).get(keysOf(UNKNOWN_TEAM)), 404, 'TEAM_NOT_FOUND');
    // Nothing was revoked by the refused DELETEs.
    await as(t, team).get('/me').expect(200);
  });

  it('follows a change of role at once', async () => {
    const promoted = await createUser(t);
    await addTeamMember(t, team, promoted, 'member');
    expectProblem(await as(t, promoted).get(keysOf(team.teamId)), 403, 'FORBIDDEN');
    await addTeamMember(t, team, promoted, 'admin');
    await as(t, promoted).get(keysOf(team.teamId)).expect(200);
    await addTeamMember(t, team, promoted, 'member');
    expectProblem(await as(t, promoted).get(keysOf(team.teamId)), 403, 'FORBIDDEN');
  });

  it("revokes only the team's own keys (404 for another team's or a user's key)", async () => {
    const other = await as(t, otherTeam).get('/me').expect(200);
    const rootKey = await as(t, admin).get('/me').expect(200);
    for (const keyId of [other.body.key.id, rootKey.body.key.id, 'not-an-id'])
      expectProblem(
        await as(t, admin).delete(`${keysOf(team.teamId)}/${keyId}`),
        404,
        'API_KEY_NOT_FOUND',
      );
    await as(t, otherTeam).get('/me').expect(200);
    await as(t, admin).get('/me').expect(200);
  });

  it('refuses bad bodies (400)', async () => {
    const path = keysOf(team.teamId);
    const before = await as(t, admin).get(path).expect(200);
    expectInvalid(await as(t, admin).post(path, { branch: 'Bad!' }), 'branch');
    expectInvalid(
      await as(t, admin).post(path, { expiresAt: '2001-01-01T00:00:00Z' }),
      'expiresAt',
    );
    expectInvalid(await as(t, admin).post(path, { expiresAt: 'tomorrow' }), 'expiresAt');
    expectInvalid(await as(t, admin).post(path, { name: 'x'.repeat(101) }), 'name');
    expectInvalid(
      await as(t, admin).post(path, { clientId: 'web', accountId: 'acct-1' }),
      'clientId',
      'accountId',
    );
    const after = await as(t, admin).get(path).expect(200);
    expect(ids(after)).toEqual(ids(before));
  });

  it('refuses other callers: no key (401), a branch-bound root key, team keys and X-Team (403)', async () => {
    const path = keysOf(team.teamId);
    expectProblem(await anonymous(t).get(path), 401, 'UNAUTHENTICATED');
    expectProblem(await anonymous(t).post(path, {}), 401, 'UNAUTHENTICATED');
    expectProblem(await anonymous(t).delete(`${path}/x`), 401, 'UNAUTHENTICATED');
    const bound = await createApiKey(t, admin, { branch: 'staging' });
    const res = await as(t, bound.apiKey).get(path);
    expectProblem(res, 403, 'FORBIDDEN');
    expect(res.body.detail).toMatch(/bound to branch 'staging'/);
    expectProblem(await as(t, bound.apiKey).post(path, {}), 403, 'FORBIDDEN');
    expectProblem(await as(t, team).get(path), 403, 'FORBIDDEN');
    expectProblem(await actingFor(admin, team.teamId).get(path), 403, 'FORBIDDEN');
    expectProblem(await asOperator(t).get(path), 403, 'FORBIDDEN');
  });
});

describe('OpenAPI', () => {
  let document: OpenAPIV3.Document;
  beforeAll(async () => {
    document = (await t.http().get('/docs-json').expect(200)).body as OpenAPIV3.Document;
  });
  const headerNames = (operation: OpenAPIV3.OperationObject | undefined) =>
    ((operation?.parameters ?? []) as OpenAPIV3.ParameterObject[])
      .filter((p) => p.in === 'header')
      .map((p) => p.name);

  it('documents X-Team wherever team keys are allowed, and nowhere else', () => {
    expect(headerNames(document.paths['/project']?.post)).toContain('X-Team');
    expect(headerNames(document.paths['/data/{collection}']?.get)).toContain('X-Team');
    expect(headerNames(document.paths['/me']?.get)).toContain('X-Team');
    expect(headerNames(document.paths['/profile']?.get)).not.toContain('X-Team');
    expect(headerNames(document.paths['/teams']?.get)).not.toContain('X-Team');
    expect(headerNames(document.paths['/admin/teams']?.get)).not.toContain('X-Team');
    const param = (document.paths['/project']!.post!.parameters as OpenAPIV3.ParameterObject[])
      .filter((p) => p.name === 'X-Team')
      .map((p) => new RegExp((p.schema as OpenAPIV3.SchemaObject).pattern!))[0]!;
    expect(param.test(team.teamId)).toBe(true);
    expect(param.test('platform')).toBe(false);
  });

  it('tags the member routes teams and the operator routes admin', () => {
    for (const [path, method] of [
      ['/teams', 'get'],
      ['/teams/{id}/api-keys', 'get'],
      ['/teams/{id}/api-keys', 'post'],
      ['/teams/{id}/api-keys/{keyId}', 'delete'],
    ] as const)
      expect(document.paths[path]?.[method]?.tags).toEqual(['teams']);
    for (const [path, method] of [
      ['/admin/teams', 'get'],
      ['/admin/teams/{id}', 'get'],
      ['/admin/teams/{id}/members/{subject}', 'put'],
      ['/admin/teams/{id}/members/{subject}', 'delete'],
      ['/admin/users', 'get'],
      ['/admin/users/{subject}', 'get'],
    ] as const)
      expect(document.paths[path]?.[method]?.tags).toEqual(['admin']);
  });
});
