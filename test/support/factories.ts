import { randomBytes } from 'node:crypto';
import { TEST_ADMIN_KEY, type TestApp } from './app';
import { as, type KeyHolder } from './http';
import type { ProjectDto } from '../../src/project/dto/project.dto';

export interface TestUser {
  subject: string;
  email: string;
  apiKey: string;
  profileId: string;
}

export interface TestTeam {
  teamId: string;
  apiKey: string;
}

function suffix(): string {
  return randomBytes(4).toString('hex');
}

/** Creates a user through the operator API and returns its root key. */
export async function createUser(
  t: TestApp,
  fields: { subject?: string; email?: string; region?: string } = {},
): Promise<TestUser> {
  const email = fields.email ?? `user-${suffix()}@example.com`;
  const res = await t
    .http()
    .post('/admin/users')
    .set('X-Api-Key', TEST_ADMIN_KEY)
    .send({
      email,
      ...(fields.subject ? { subject: fields.subject } : {}),
      ...(fields.region ? { region: fields.region } : {}),
    })
    .expect(200);
  return {
    subject: res.body.profile.subject,
    email,
    apiKey: res.body.apiKey,
    profileId: res.body.profile.id,
  };
}

export async function createTeam(
  t: TestApp,
  name = `team-${suffix()}`,
  region?: string,
): Promise<TestTeam> {
  const res = await t
    .http()
    .post('/admin/teams')
    .set('X-Api-Key', TEST_ADMIN_KEY)
    .send({ name, ...(region ? { region } : {}) })
    .expect(200);
  return { teamId: res.body.team.id, apiKey: res.body.apiKey };
}

/** Makes `user` a member of `team` with `role` through the operator's PUT; returns the membership. */
export async function addTeamMember(
  t: TestApp,
  team: Pick<TestTeam, 'teamId'>,
  user: Pick<TestUser, 'subject'>,
  role: 'admin' | 'member' = 'member',
): Promise<{ subject: string; role: string; createdAt: string }> {
  const res = await t
    .http()
    .put(`/admin/teams/${team.teamId}/members/${encodeURIComponent(user.subject)}`)
    .set('X-Api-Key', TEST_ADMIN_KEY)
    .send({ role })
    .expect(200);
  return res.body as { subject: string; role: string; createdAt: string };
}

export interface TestSubProfile {
  subject: string;
  clientId: string;
  accountId: string;
  branch: string;
  profileId: string;
  apiKey: string;
}

/**
 * A sub profile of `user` and a sub key acting as it. The profile document is written straight
 * into the database (test data set-up that does not depend on the profile routes under test);
 * the key is minted through the real POST /api-keys.
 */
export async function createSubKey(
  t: TestApp,
  user: TestUser,
  fields: { clientId?: string; accountId?: string; branch?: string; groups?: string[] } = {},
): Promise<TestSubProfile> {
  const clientId = fields.clientId ?? 'test-client';
  const accountId = fields.accountId ?? `acct-${suffix()}`;
  const branch = fields.branch ?? '';
  const now = new Date();
  const inserted = await t.connection.collection('profiles').insertOne({
    subject: user.subject,
    branch,
    clientId,
    accountId,
    email: `${accountId}@example.com`,
    avatar: '',
    settings: {},
    metadata: {},
    groups: fields.groups ?? [],
    plans: [],
    createdAt: now,
    updatedAt: now,
  });
  const res = await t
    .http()
    .post('/api-keys')
    .set('X-Api-Key', user.apiKey)
    .send({ clientId, accountId, ...(branch ? { branch } : {}) })
    .expect(200);
  return {
    subject: user.subject,
    clientId,
    accountId,
    branch,
    profileId: inserted.insertedId.toHexString(),
    apiKey: res.body.apiKey,
  };
}

export interface TestApiKey {
  /** The key's listed metadata. */
  key: {
    id: string;
    name: string;
    kind: string;
    prefix: string;
    branch: string | null;
    expiresAt: string | null;
  };
  /** The secret, shown only once. */
  apiKey: string;
}

/** Mints a key through the real POST /api-keys as `owner` (body: name, branch, expiresAt, …). */
export async function createApiKey(
  t: TestApp,
  owner: KeyHolder,
  body: Record<string, unknown> = {},
): Promise<TestApiKey> {
  const res = await as(t, owner).post('/api-keys', body).expect(200);
  return res.body as TestApiKey;
}

/** A project as the API returns it. */
export type TestProject = ProjectDto;

/** Creates a project through POST /project as `owner`, in `branch` when given. */
export async function createProject(
  t: TestApp,
  owner: KeyHolder,
  fields: { name?: string; tags?: string[] } = {},
  branch?: string,
): Promise<TestProject> {
  const body = { ...fields, name: fields.name ?? `project-${suffix()}` };
  const res = await as(t, owner).post('/project', body, { branch }).expect(200);
  return res.body as TestProject;
}

/** Who the data isolation tests act as: a user, two of its sub profiles, and a team. */
export interface TestTenants {
  user: TestUser;
  subA: TestSubProfile;
  subB: TestSubProfile;
  team: TestTeam;
}

export async function createTenants(t: TestApp): Promise<TestTenants> {
  const user = await createUser(t);
  return {
    user,
    subA: await createSubKey(t, user),
    subB: await createSubKey(t, user),
    team: await createTeam(t),
  };
}
