import { randomBytes } from 'node:crypto';
import { createTestApp, everyDatabase, TEST_ADMIN_KEY, type TestApp } from '../support/app';
import { documentsNaming } from '../support/database-scan';
import { createSubKey, createTeam, createUser, type TestUser } from '../support/factories';
import { expectInvalid, expectProblem } from '../support/problems';

/** Account and team erasure: DELETE /admin/users/{subject}, DELETE /profile, DELETE /admin/teams/{id}. */
let t: TestApp;

beforeAll(async () => {
  t = await createTestApp(__filename, { LIFECYCLE_POLL_MS: '50', ERASURE_LEASE_MS: '2000' });
});
afterAll(async () => t.close());

const admin = () => ({ 'X-Api-Key': TEST_ADMIN_KEY });

interface ErasureBody {
  id: string;
  kind: string;
  status: string;
  stepsDone: string[];
  collectionsDropped: number;
  runs: number;
  finishedAt: string | null;
}

async function settled(id: string): Promise<ErasureBody> {
  for (let i = 0; i < 200; i += 1) {
    const res = await t.http().get(`/admin/erasures/${id}`).set(admin()).expect(200);
    if ((res.body as ErasureBody).status === 'done') return res.body as ErasureBody;
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error(`erasure ${id} did not finish`);
}

/** A user with something of everything: sub profiles, keys, projects and data in two branches. */
async function populatedUser(): Promise<TestUser & { keys: string[] }> {
  const subject = `erase-${randomBytes(6).toString('hex')}`;
  const user = await createUser(t, { subject });
  const sub = await createSubKey(t, user, { clientId: 'web', accountId: `${subject}-acct` });
  const staging = await createSubKey(t, user, { clientId: 'web', branch: 'staging' });
  const extra = await t.http().post('/api-keys').set('X-Api-Key', user.apiKey).send({}).expect(200);
  // A member of a team, which acts for the team too.
  const team = await createTeam(t);
  await t
    .http()
    .put(`/admin/teams/${team.teamId}/members/${subject}`)
    .set(admin())
    .send({ role: 'member' })
    .expect(200);
  for (const branch of ['', 'staging']) {
    await t
      .http()
      .post('/project')
      .set('X-Api-Key', user.apiKey)
      .set('X-Branch', branch)
      .send({ name: `project of ${subject}` })
      .expect(200);
    for (const collection of ['orders', 'notes']) {
      await t
        .http()
        .post(`/data/${collection}`)
        .set('X-Api-Key', user.apiKey)
        .set('X-Branch', branch)
        .send({ item: { owner: subject, sku: `${subject}-sku` }, uniqueField: 'sku' })
        .expect(200);
      await t
        .http()
        .post(`/data/${collection}/index`)
        .set('X-Api-Key', user.apiKey)
        .set('X-Branch', branch)
        .send({ field: 'sku', unique: true })
        .expect(200);
    }
  }
  await t
    .http()
    .post('/data/orders')
    .set('X-Api-Key', sub.apiKey)
    .send({ item: { note: 'by the sub' } })
    .expect(200);
  return { ...user, keys: [user.apiKey, sub.apiKey, staging.apiKey, extra.body.apiKey] };
}

describe('DELETE /admin/users/{subject}', () => {
  it('revokes every key at once, erases everything, and leaves no document naming the subject', async () => {
    const user = await populatedUser();
    const bystander = await populatedUser();

    const res = await t.http().delete(`/admin/users/${user.subject}`).set(admin()).expect(202);
    const erasure = res.body as ErasureBody;
    expect(res.headers.location).toBe(`/admin/erasures/${erasure.id}`);
    expect(erasure.kind).toBe('user');
    expect(erasure.stepsDone).toContain('keys');
    // Every key stopped working before the answer.
    for (const key of user.keys)
      expectProblem(await t.http().get('/me').set('X-Api-Key', key), 401, 'UNAUTHENTICATED');

    const done = await settled(erasure.id);
    expect(done.stepsDone).toEqual([
      'keys',
      'memberships',
      'projects',
      'collections',
      'files',
      'owner',
    ]);
    expect(done.collectionsDropped).toBe(4);
    expect(done.finishedAt).not.toBeNull();

    expect(await documentsNaming(await everyDatabase(t), user.subject)).toEqual([]);
    // The bystander keeps everything.
    expect(
      (await documentsNaming(await everyDatabase(t), bystander.subject)).length,
    ).toBeGreaterThan(10);
    // Its own order and its sub profile's.
    await t.http().get('/data/orders/count').set('X-Api-Key', bystander.apiKey).expect(200, {
      count: 2,
    });
    // The subject is free again.
    await createUser(t, { subject: user.subject });
  });

  it('is idempotent: a repeat answers the same erasure, running or done', async () => {
    const user = await populatedUser();
    const [first, second] = await Promise.all([
      t.http().delete(`/admin/users/${user.subject}`).set(admin()).expect(202),
      t.http().delete(`/admin/users/${user.subject}`).set(admin()).expect(202),
    ]);
    expect(second.body.id).toBe(first.body.id);
    await settled(first.body.id);
    const again = await t.http().delete(`/admin/users/${user.subject}`).set(admin()).expect(202);
    expect(again.body).toMatchObject({ id: first.body.id, status: 'done' });
  });

  it('answers 404 for an unknown user and an unknown erasure', async () => {
    expectProblem(
      await t.http().delete('/admin/users/nobody-here').set(admin()),
      404,
      'PROFILE_NOT_FOUND',
    );
    expectProblem(
      await t.http().get('/admin/erasures/0123456789abcdef01234567').set(admin()),
      404,
      'ERASURE_NOT_FOUND',
    );
    expectProblem(
      await t.http().get('/admin/erasures/not-an-id').set(admin()),
      404,
      'ERASURE_NOT_FOUND',
    );
  });

  it('is for the operator: 401 without a key, 403 for customer keys', async () => {
    const user = await createUser(t);
    expectProblem(await t.http().delete(`/admin/users/${user.subject}`), 401, 'UNAUTHENTICATED');
    expectProblem(
      await t.http().delete(`/admin/users/${user.subject}`).set('X-Api-Key', user.apiKey),
      403,
      'FORBIDDEN',
    );
    const team = await createTeam(t);
    expectProblem(
      await t.http().get('/admin/erasures/0123456789abcdef01234567').set('X-Api-Key', team.apiKey),
      403,
      'FORBIDDEN',
    );
    await t.http().get('/me').set('X-Api-Key', user.apiKey).expect(200);
  });
});

describe('DELETE /profile (self-service erasure)', () => {
  it('needs the subject typed out in confirm', async () => {
    const user = await createUser(t);
    for (const body of [{}, { confirm: 'someone-else' }, { confirm: null }])
      expectInvalid(
        await t.http().delete('/profile').set('X-Api-Key', user.apiKey).send(body),
        'confirm',
      );
    expectInvalid(await t.http().delete('/profile').set('X-Api-Key', user.apiKey), '');
    await t.http().get('/profile').set('X-Api-Key', user.apiKey).expect(200);
  });

  it('refuses sub, team and branch-bound root keys', async () => {
    const user = await createUser(t);
    const sub = await createSubKey(t, user);
    const bound = await t
      .http()
      .post('/api-keys')
      .set('X-Api-Key', user.apiKey)
      .send({ branch: 'staging' })
      .expect(200);
    const team = await createTeam(t);
    for (const key of [sub.apiKey, bound.body.apiKey as string, team.apiKey])
      expectProblem(
        await t.http().delete('/profile').set('X-Api-Key', key).send({ confirm: user.subject }),
        403,
        'FORBIDDEN',
      );
    await t.http().get('/profile').set('X-Api-Key', user.apiKey).expect(200);
  });

  it('starts the same erasure as the operator', async () => {
    const user = await populatedUser();
    const res = await t
      .http()
      .delete('/profile')
      .set('X-Api-Key', user.apiKey)
      .send({ confirm: user.subject })
      .expect(202);
    expectProblem(
      await t.http().get('/profile').set('X-Api-Key', user.apiKey),
      401,
      'UNAUTHENTICATED',
    );
    await settled(res.body.id);
    expect(await documentsNaming(await everyDatabase(t), user.subject)).toEqual([]);
  });
});

describe('DELETE /admin/teams/{id}', () => {
  it('erases the team like an account: keys, memberships, projects, collections, the team', async () => {
    const team = await createTeam(t, 'doomed');
    const member = await createUser(t);
    const bystanderTeam = await createTeam(t, 'stays');
    await t
      .http()
      .put(`/admin/teams/${team.teamId}/members/${member.subject}`)
      .set(admin())
      .send({ role: 'admin' })
      .expect(200);
    await t
      .http()
      .post('/project')
      .set('X-Api-Key', team.apiKey)
      .send({ name: 'team project' })
      .expect(200);
    for (const branch of ['', 'staging'])
      await t
        .http()
        .post('/data/board')
        .set('X-Api-Key', member.apiKey)
        .set('X-Team', team.teamId)
        .set('X-Branch', branch)
        .send({ item: { card: 1 } })
        .expect(200);
    await t
      .http()
      .post('/data/board')
      .set('X-Api-Key', bystanderTeam.apiKey)
      .send({ item: { card: 2 } })
      .expect(200);

    const res = await t.http().delete(`/admin/teams/${team.teamId}`).set(admin()).expect(202);
    expect(res.body.kind).toBe('team');
    expectProblem(await t.http().get('/me').set('X-Api-Key', team.apiKey), 401, 'UNAUTHENTICATED');
    const done = await settled(res.body.id);
    expect(done.collectionsDropped).toBe(2);

    expect(await documentsNaming(await everyDatabase(t), team.teamId)).toEqual([]);
    expectProblem(
      await t.http().get(`/admin/teams/${team.teamId}`).set(admin()),
      404,
      'TEAM_NOT_FOUND',
    );
    // The member keeps its own account; the other team keeps its data.
    await t.http().get('/teams').set('X-Api-Key', member.apiKey).expect(200, []);
    await t.http().get('/data/board/count').set('X-Api-Key', bystanderTeam.apiKey).expect(200, {
      count: 1,
    });
  });

  it('answers 404 for an unknown team', async () => {
    expectProblem(
      await t.http().delete('/admin/teams/00000000-0000-4000-8000-000000000000').set(admin()),
      404,
      'TEAM_NOT_FOUND',
    );
  });
});
