import { randomBytes } from 'node:crypto';
import { TEST_ADMIN_KEY, type TestApp } from './app';

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
export async function createUser(t: TestApp, fields: { subject?: string; email?: string } = {}): Promise<TestUser> {
  const email = fields.email ?? `user-${suffix()}@example.com`;
  const res = await t
    .http()
    .post('/admin/users')
    .set('X-Api-Key', TEST_ADMIN_KEY)
    .send({ email, ...(fields.subject ? { subject: fields.subject } : {}) })
    .expect(200);
  return { subject: res.body.profile.subject, email, apiKey: res.body.apiKey, profileId: res.body.profile.id };
}

export async function createTeam(t: TestApp, name = `team-${suffix()}`): Promise<TestTeam> {
  const res = await t.http().post('/admin/teams').set('X-Api-Key', TEST_ADMIN_KEY).send({ name }).expect(200);
  return { teamId: res.body.team.id, apiKey: res.body.apiKey };
}
