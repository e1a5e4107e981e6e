import { createTestApp, TEST_ADMIN_KEY, type TestApp } from '../support/app';
import { createSubKey, createTeam, createUser, type TestUser } from '../support/factories';
import { expectProblem } from '../support/problems';

/** The operator's reads of users: GET /admin/users and GET /admin/users/{subject}. */
let t: TestApp;
let users: TestUser[];
const operator = { 'X-Api-Key': TEST_ADMIN_KEY };

beforeAll(async () => {
  t = await createTestApp(__filename);
  users = [];
  for (let i = 0; i < 5; i += 1)
    users.push(await createUser(t, { subject: `reader-${i}`, email: `Reader-${i}@Example.com` }));
});
afterAll(async () => t.close());

describe('GET /admin/users', () => {
  it('walks every user once, by subject, through Link', async () => {
    const seen: string[] = [];
    let next: string | undefined = '/admin/users?limit=2';
    while (next) {
      const page: { body: unknown; headers: Record<string, string> } = await t
        .http()
        .get(next)
        .set(operator)
        .expect(200);
      seen.push(...(page.body as { subject: string }[]).map((u) => u.subject));
      next = /<([^>]+)>; rel="next"/.exec(page.headers.link ?? '')?.[1];
    }
    expect(seen).toEqual(['reader-0', 'reader-1', 'reader-2', 'reader-3', 'reader-4']);
  });

  it('finds a user by email, whatever its case', async () => {
    const res = await t
      .http()
      .get('/admin/users')
      .query({ email: 'READER-3@example.COM' })
      .set(operator)
      .expect(200);
    expect(res.body).toEqual([
      { subject: 'reader-3', email: 'reader-3@example.com', createdAt: expect.any(String) },
    ]);
    await t.http().get('/admin/users?email=none@example.com').set(operator).expect(200, []);
  });

  it('refuses other parameters, cursors and customer keys', async () => {
    for (const query of ['sort=email', 'after[email]=x', 'subject=reader-1', 'limit=501'])
      expectProblem(
        await t.http().get(`/admin/users?${query}`).set(operator),
        400,
        'VALIDATION_FAILED',
      );
    expectProblem(await t.http().get('/admin/users'), 401, 'UNAUTHENTICATED');
    expectProblem(
      await t.http().get('/admin/users').set('X-Api-Key', users[0]!.apiKey),
      403,
      'FORBIDDEN',
    );
  });
});

describe('GET /admin/users/{subject}', () => {
  it('shows the profile, key metadata, teams and quota use', async () => {
    const user = users[1]!;
    await createSubKey(t, user, { clientId: 'web', accountId: 'acct-reader' });
    const team = await createTeam(t, 'readers');
    await t
      .http()
      .put(`/admin/teams/${team.teamId}/members/${user.subject}`)
      .set(operator)
      .send({ role: 'admin' })
      .expect(200);
    await t.http().post('/data/a').set('X-Api-Key', user.apiKey).send({ item: {} }).expect(200);
    await t
      .http()
      .post('/data/b')
      .set('X-Api-Key', user.apiKey)
      .set('X-Branch', 'staging')
      .send({ item: {} })
      .expect(200);

    const res = await t.http().get(`/admin/users/${user.subject}`).set(operator).expect(200);
    expect(res.body.profile).toMatchObject({
      subject: user.subject,
      email: 'reader-1@example.com',
    });
    expect((res.body.keys as { kind: string }[]).map((k) => k.kind).sort()).toEqual([
      'root',
      'sub',
    ]);
    expect(JSON.stringify(res.body)).not.toContain(user.apiKey);
    expect(JSON.stringify(res.body)).not.toMatch(/digest/);
    expect(res.body.teams).toEqual([{ teamId: team.teamId, name: 'readers', role: 'admin' }]);
    // The standard branch's collections only.
    expect(res.body.quota).toEqual({
      collections: { used: 1, limit: t.config.limits.maxCollections },
    });
  });

  it('answers 404 for an unknown user', async () => {
    expectProblem(
      await t.http().get('/admin/users/nobody').set(operator),
      404,
      'PROFILE_NOT_FOUND',
    );
  });
});
