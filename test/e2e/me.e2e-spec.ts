import { createTestApp, TEST_ADMIN_KEY, type TestApp } from '../support/app';
import { createApiKey, createTenants, type TestTenants } from '../support/factories';
import { expectProblem } from '../support/problems';

/** GET /me for every kind of key: who it acts as, in which branch, the key, and the quotas. */
let t: TestApp;
let tenants: TestTenants;

beforeAll(async () => {
  t = await createTestApp(__filename, { MAX_COLLECTIONS: '7', MAX_INDEXES: '4' });
  tenants = await createTenants(t);
  for (const name of ['a', 'b'])
    await t
      .http()
      .post(`/data/${name}`)
      .set('X-Api-Key', tenants.user.apiKey)
      .send({ item: {} })
      .expect(200);
  await t
    .http()
    .post('/data/other-branch')
    .set('X-Api-Key', tenants.user.apiKey)
    .set('X-Branch', 'staging')
    .send({ item: {} })
    .expect(200);
});
afterAll(async () => t.close());

const me = (key: string, branch?: string) => {
  const req = t.http().get('/me').set('X-Api-Key', key);
  return branch === undefined ? req : req.set('X-Branch', branch);
};

it("describes a root key: subject, branch, the key, and the namespace's collection quota", async () => {
  const res = await me(tenants.user.apiKey).expect(200);
  expect(res.body).toMatchObject({
    kind: 'root',
    subject: tenants.user.subject,
    branch: '',
    boundBranch: null,
    quota: {
      collections: { used: 2, limit: 7 },
      indexesPerCollection: 4,
      requestsPerWindow: expect.any(Number),
      windowMs: expect.any(Number),
    },
  });
  expect(res.body.key).toMatchObject({ id: expect.any(String), expiresAt: null });
  expect(tenants.user.apiKey.startsWith(res.body.key.prefix)).toBe(true);
  // Per branch: the staging namespace holds one collection.
  const staging = await me(tenants.user.apiKey, 'staging').expect(200);
  expect(staging.body).toMatchObject({ branch: 'staging', quota: { collections: { used: 1 } } });
});

it('describes a sub key with its sub profile, sharing the user namespace quota', async () => {
  const res = await me(tenants.subA.apiKey).expect(200);
  expect(res.body).toMatchObject({
    kind: 'sub',
    subject: tenants.user.subject,
    clientId: tenants.subA.clientId,
    accountId: tenants.subA.accountId,
    profileId: tenants.subA.profileId,
    quota: { collections: { used: 2, limit: 7 } },
  });
  expect(res.body).not.toHaveProperty('teamId');
});

it("describes a team key with the team's own namespace", async () => {
  const res = await me(tenants.team.apiKey).expect(200);
  expect(res.body).toMatchObject({
    kind: 'team',
    teamId: tenants.team.teamId,
    quota: { collections: { used: 0, limit: 7 } },
  });
  expect(res.body).not.toHaveProperty('subject');
});

it('describes the operator key without a stored key or collections', async () => {
  const res = await me(TEST_ADMIN_KEY).expect(200);
  expect(res.body).toMatchObject({ kind: 'operator', key: null, quota: { collections: null } });
});

it('names the bound branch and the expiry of a key that has them', async () => {
  const expiresAt = new Date(Date.now() + 3_600_000).toISOString();
  const bound = await createApiKey(t, tenants.user.apiKey, {
    name: 'ci',
    branch: 'staging',
    expiresAt,
  });
  const res = await me(bound.apiKey).expect(200);
  expect(res.body).toMatchObject({
    kind: 'root',
    branch: 'staging',
    boundBranch: 'staging',
    key: { id: bound.key.id, name: 'ci', expiresAt },
    quota: { collections: { used: 1 } },
  });
});

describe('GET /me/branches', () => {
  it('lists the branches holding collections, the standard one first, with their counts', async () => {
    const res = await t
      .http()
      .get('/me/branches')
      .set('X-Api-Key', tenants.user.apiKey)
      .expect(200);
    expect(res.body).toEqual([
      { name: '', collections: 2 },
      { name: 'staging', collections: 1 },
    ]);
    // A sub key shares the user's namespace, bound to its key's branch; a team has its own.
    await t
      .http()
      .get('/me/branches')
      .set('X-Api-Key', tenants.subA.apiKey)
      .expect(200, [{ name: '', collections: 2 }]);
    await t.http().get('/me/branches').set('X-Api-Key', tenants.team.apiKey).expect(200, []);
  });

  it('pages by name through Link, the standard branch included', async () => {
    const first = await t
      .http()
      .get('/me/branches?limit=1')
      .set('X-Api-Key', tenants.user.apiKey)
      .expect(200);
    expect(first.body).toEqual([{ name: '', collections: 2 }]);
    expect(first.headers.link).toBe('</me/branches?limit=1&after%5Bbranch%5D=>; rel="next"');
    const second = await t
      .http()
      .get('/me/branches?limit=1&after[branch]=')
      .set('X-Api-Key', tenants.user.apiKey)
      .expect(200);
    expect(second.body).toEqual([{ name: 'staging', collections: 1 }]);
    expect(second.headers.link).toBeUndefined();
  });

  it('shows a key bound to a branch only that branch, and is not for the operator', async () => {
    const bound = await createApiKey(t, tenants.user.apiKey, { branch: 'staging' });
    await t
      .http()
      .get('/me/branches')
      .set('X-Api-Key', bound.apiKey)
      .expect(200, [{ name: 'staging', collections: 1 }]);
    expectProblem(
      await t.http().get('/me/branches').set('X-Api-Key', TEST_ADMIN_KEY),
      403,
      'FORBIDDEN',
    );
    expectProblem(
      await t
        .http()
        .get('/me/branches?after[branch]=Bad Name')
        .set('X-Api-Key', tenants.user.apiKey),
      400,
      'VALIDATION_FAILED',
    );
  });
});

it('is a 401 without a valid key', async () => {
  expectProblem(await t.http().get('/me'), 401, 'UNAUTHENTICATED');
  expectProblem(await t.http().get('/me').set('X-Api-Key', 'pds_nope'), 401, 'UNAUTHENTICATED');
});
