import { createTestApp, type TestApp } from '../support/app';
import { createSubKey, createUser, type TestUser } from '../support/factories';

interface ListedKey {
  id: string;
  name: string;
  kind: string;
  accountId: string;
  branch: string | null;
}

interface IssuedKey {
  key: ListedKey;
  apiKey: string;
}

/** A user with its unbound main key and root keys bound to `dev` and to `prod`. */
interface BranchedUser {
  user: TestUser;
  mainId: string;
  dev: IssuedKey;
  prod: IssuedKey;
}

describe('/api-keys with a key bound to a branch', () => {
  let t: TestApp;

  beforeAll(async () => {
    t = await createTestApp(__filename);
  });

  afterAll(async () => {
    await t.close();
  });

  async function createKey(apiKey: string, body: Record<string, unknown>): Promise<IssuedKey> {
    const res = await t.http().post('/api-keys').set('X-Api-Key', apiKey).send(body).expect(200);
    return res.body as IssuedKey;
  }

  async function listKeys(apiKey: string): Promise<ListedKey[]> {
    const res = await t.http().get('/api-keys').set('X-Api-Key', apiKey).expect(200);
    return res.body as ListedKey[];
  }

  async function branchedUser(): Promise<BranchedUser> {
    const user = await createUser(t);
    const [main] = await listKeys(user.apiKey);
    const dev = await createKey(user.apiKey, { name: 'dev', branch: 'dev' });
    const prod = await createKey(user.apiKey, { name: 'prod', branch: 'prod' });
    return { user, mainId: main?.id ?? '', dev, prod };
  }

  it('lists only the keys bound to its own branch', async () => {
    const { user, mainId, dev, prod } = await branchedUser();
    const devSub = await createSubKey(t, user, { branch: 'dev' });
    await createSubKey(t, user, { branch: 'prod' });
    const devChild = await createKey(user.apiKey, { name: 'dev child', branch: 'dev' });

    const listed = await listKeys(dev.apiKey);
    expect(listed.map((k) => k.branch)).toEqual(['dev', 'dev', 'dev']);
    expect(listed.map((k) => k.id)).toEqual(expect.arrayContaining([dev.key.id, devChild.key.id]));
    expect(listed.find((k) => k.kind === 'sub')).toMatchObject({ accountId: devSub.accountId });
    const ids = listed.map((k) => k.id);
    expect(ids).not.toContain(mainId);
    expect(ids).not.toContain(prod.key.id);
  });

  it('binds a key it creates without a branch to its own branch', async () => {
    const { user, dev } = await branchedUser();
    const child = await createKey(dev.apiKey, { name: 'escape' });
    expect(child.key).toMatchObject({ name: 'escape', kind: 'root', branch: 'dev' });

    const mismatch = await t
      .http()
      .get('/api-keys')
      .set('X-Api-Key', child.apiKey)
      .set('X-Branch', 'prod')
      .expect(403);
    expect(mismatch.body.code).toBe('BRANCH_MISMATCH');
    const fromChild = await listKeys(child.apiKey);
    expect(fromChild.every((k) => k.branch === 'dev')).toBe(true);
    const all = await listKeys(user.apiKey);
    expect(all.find((k) => k.id === child.key.id)?.branch).toBe('dev');
  });

  it('refuses to create a key bound to another branch with 403 BRANCH_MISMATCH', async () => {
    const { user, dev } = await branchedUser();
    const before = await listKeys(user.apiKey);
    const res = await t
      .http()
      .post('/api-keys')
      .set('X-Api-Key', dev.apiKey)
      .send({ name: 'escape', branch: 'prod' })
      .expect(403);
    expect(res.headers['content-type']).toMatch(/^application\/problem\+json/);
    expect(res.body).toMatchObject({ status: 403, code: 'BRANCH_MISMATCH' });
    expect(await listKeys(user.apiKey)).toHaveLength(before.length);
  });

  it('creates a sub key for a sub profile of its branch, bound to it', async () => {
    const { user, dev } = await branchedUser();
    const devSub = await createSubKey(t, user, { branch: 'dev' });
    const sub = await createKey(dev.apiKey, {
      clientId: devSub.clientId,
      accountId: devSub.accountId,
    });
    expect(sub.key).toMatchObject({ kind: 'sub', accountId: devSub.accountId, branch: 'dev' });

    const profile = await t.http().get('/profile').set('X-Api-Key', sub.apiKey).expect(200);
    expect(profile.body).toMatchObject({ accountId: devSub.accountId, branch: 'dev' });
    const mismatch = await t
      .http()
      .get('/profile')
      .set('X-Api-Key', sub.apiKey)
      .set('X-Branch', 'prod')
      .expect(403);
    expect(mismatch.body.code).toBe('BRANCH_MISMATCH');
  });

  it('refuses a sub key for a sub profile of another branch', async () => {
    const { user, dev } = await branchedUser();
    const prodSub = await createSubKey(t, user, { branch: 'prod' });
    const named = await t
      .http()
      .post('/api-keys')
      .set('X-Api-Key', dev.apiKey)
      .send({ clientId: prodSub.clientId, accountId: prodSub.accountId, branch: 'prod' })
      .expect(403);
    expect(named.body.code).toBe('BRANCH_MISMATCH');
    // Without a branch it looks in its own branch, where that sub profile does not exist.
    const unnamed = await t
      .http()
      .post('/api-keys')
      .set('X-Api-Key', dev.apiKey)
      .send({ clientId: prodSub.clientId, accountId: prodSub.accountId })
      .expect(404);
    expect(unnamed.body.code).toBe('PROFILE_NOT_FOUND');
    const keys = await listKeys(user.apiKey);
    expect(keys.filter((k) => k.accountId === prodSub.accountId)).toHaveLength(1);
  });

  it('refuses to revoke the unbound main key with 403, which keeps working', async () => {
    const { user, mainId, dev } = await branchedUser();
    const res = await t
      .http()
      .delete(`/api-keys/${mainId}`)
      .set('X-Api-Key', dev.apiKey)
      .expect(403);
    expect(res.body).toMatchObject({ status: 403, code: 'FORBIDDEN' });
    const keys = await listKeys(user.apiKey);
    expect(keys.map((k) => k.id)).toContain(mainId);
  });

  it('refuses to revoke a key of another branch with 403, which keeps working', async () => {
    const { dev, prod } = await branchedUser();
    const res = await t
      .http()
      .delete(`/api-keys/${prod.key.id}`)
      .set('X-Api-Key', dev.apiKey)
      .expect(403);
    expect(res.body.code).toBe('FORBIDDEN');
    await t.http().get('/api-keys').set('X-Api-Key', prod.apiKey).expect(200);
  });

  it('revokes a key of its own branch with 204', async () => {
    const { user, dev } = await branchedUser();
    const sibling = await createKey(user.apiKey, { name: 'sibling', branch: 'dev' });
    await t.http().get('/api-keys').set('X-Api-Key', sibling.apiKey).expect(200);
    await t.http().delete(`/api-keys/${sibling.key.id}`).set('X-Api-Key', dev.apiKey).expect(204);
    const revoked = await t.http().get('/api-keys').set('X-Api-Key', sibling.apiKey).expect(401);
    expect(revoked.body.code).toBe('UNAUTHENTICATED');
  });

  it('answers 404 for a key id of another user', async () => {
    const { dev } = await branchedUser();
    const other = await branchedUser();
    const res = await t
      .http()
      .delete(`/api-keys/${other.dev.key.id}`)
      .set('X-Api-Key', dev.apiKey)
      .expect(404);
    expect(res.body.code).toBe('API_KEY_NOT_FOUND');
    await t.http().get('/api-keys').set('X-Api-Key', other.dev.apiKey).expect(200);
  });

  it('still lets an unbound root key list, create and revoke keys of every branch', async () => {
    const { user, mainId, dev, prod } = await branchedUser();
    const listed = await listKeys(user.apiKey);
    expect(listed.map((k) => k.id)).toEqual([mainId, dev.key.id, prod.key.id]);
    expect(listed.map((k) => k.branch)).toEqual([null, 'dev', 'prod']);

    const unbound = await createKey(user.apiKey, { name: 'free' });
    expect(unbound.key.branch).toBeNull();
    const staging = await createKey(user.apiKey, { name: 'staging', branch: 'staging' });
    expect(staging.key.branch).toBe('staging');
    const prodSub = await createSubKey(t, user, { branch: 'prod' });
    const sub = await createKey(user.apiKey, {
      clientId: prodSub.clientId,
      accountId: prodSub.accountId,
      branch: 'prod',
    });
    expect(sub.key).toMatchObject({ kind: 'sub', branch: 'prod' });

    for (const id of [dev.key.id, prod.key.id, unbound.key.id]) {
      await t.http().delete(`/api-keys/${id}`).set('X-Api-Key', user.apiKey).expect(204);
    }
    await t.http().get('/api-keys').set('X-Api-Key', dev.apiKey).expect(401);
  });
});
