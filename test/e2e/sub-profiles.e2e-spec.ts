import { createTestApp, type TestApp } from '../support/app';
import {
  createSubKey,
  createTeam,
  createUser,
  type TestSubProfile,
  type TestUser,
} from '../support/factories';
import { expectProblem } from '../support/problems';

/** Listing (GET /profiles) and deleting (DELETE /profile/{accountId}) sub profiles. */
let t: TestApp;
let user: TestUser;
let subs: TestSubProfile[];

beforeAll(async () => {
  t = await createTestApp(__filename);
  user = await createUser(t);
  subs = [];
  for (let i = 0; i < 5; i += 1)
    subs.push(
      await createSubKey(t, user, { clientId: i < 3 ? 'web' : 'mobile', accountId: `acct-${i}` }),
    );
  // Another branch, another user: never listed.
  await createSubKey(t, user, { clientId: 'web', accountId: 'acct-staging', branch: 'staging' });
  await createSubKey(t, await createUser(t), { clientId: 'web', accountId: 'acct-other' });
});
afterAll(async () => t.close());

const list = (key: string, query = '') =>
  t
    .http()
    .get(`/profiles${query ? `?${query}` : ''}`)
    .set('X-Api-Key', key);
const accounts = (body: unknown) => (body as { accountId: string }[]).map((p) => p.accountId);

describe('GET /profiles', () => {
  it("lists the subject's sub profiles of the request branch in creation order", async () => {
    const res = await list(user.apiKey).expect(200);
    expect(accounts(res.body)).toEqual(['acct-0', 'acct-1', 'acct-2', 'acct-3', 'acct-4']);
    const staging = await list(user.apiKey).set('X-Branch', 'staging').expect(200);
    expect(accounts(staging.body)).toEqual(['acct-staging']);
  });

  it('filters by clientId and walks pages through Link', async () => {
    const web = await list(user.apiKey, 'clientId=web').expect(200);
    expect(accounts(web.body)).toEqual(['acct-0', 'acct-1', 'acct-2']);
    const first = await list(user.apiKey, 'limit=2').expect(200);
    expect(accounts(first.body)).toEqual(['acct-0', 'acct-1']);
    const seen = [...accounts(first.body)];
    let link = /<([^>]+)>; rel="next"/.exec(first.headers.link ?? '')?.[1];
    while (link) {
      const page = await t.http().get(link).set('X-Api-Key', user.apiKey).expect(200);
      seen.push(...accounts(page.body));
      link = /<([^>]+)>; rel="next"/.exec(page.headers.link ?? '')?.[1];
    }
    expect(seen).toEqual(['acct-0', 'acct-1', 'acct-2', 'acct-3', 'acct-4']);
  });

  it('lets a sub key list only when its profile holds admin:subject', async () => {
    const sub = subs[1] as TestSubProfile;
    expectProblem(await list(sub.apiKey), 403, 'FORBIDDEN');
    await t
      .http()
      .put('/profile/groups')
      .set('X-Api-Key', user.apiKey)
      .query({ clientId: sub.clientId, accountId: sub.accountId })
      .send({ group: 'admin:subject' })
      .expect(200);
    expect(accounts((await list(sub.apiKey).expect(200)).body)).toHaveLength(5);
  });

  it('refuses team keys, other orders, bad cursors and unknown parameters', async () => {
    const team = await createTeam(t);
    expectProblem(await list(team.apiKey), 403, 'FORBIDDEN');
    for (const query of [
      'sort=email',
      'after[id]=zz',
      'after[email]=a',
      'limit=0',
      'color=red',
      'clientId=a%20b',
    ])
      expectProblem(await list(user.apiKey, query), 400, 'VALIDATION_FAILED');
  });
});

describe('DELETE /profile/{accountId}', () => {
  it('deletes the sub profile and revokes its keys; the items it owned stay', async () => {
    const sub = subs[4] as TestSubProfile;
    await t
      .http()
      .post('/data/notes')
      .set('X-Api-Key', sub.apiKey)
      .send({ item: { _id: 'kept' } })
      .expect(200);
    await t
      .http()
      .delete(`/profile/${sub.accountId}`)
      .query({ clientId: sub.clientId })
      .set('X-Api-Key', user.apiKey)
      .expect(204);
    expectProblem(
      await t.http().get('/profile').set('X-Api-Key', sub.apiKey),
      401,
      'UNAUTHENTICATED',
    );
    expectProblem(
      await t.http().get(`/profile/${sub.accountId}`).set('X-Api-Key', user.apiKey),
      404,
      'PROFILE_NOT_FOUND',
    );
    const kept = await t
      .http()
      .get('/data/notes/_id/kept')
      .set('X-Api-Key', user.apiKey)
      .expect(200);
    expect(kept.body.userId).toBe(sub.accountId);
    expect(accounts((await list(user.apiKey).expect(200)).body)).not.toContain(sub.accountId);
  });

  it('asks for clientId when the accountId is ambiguous, and 404s an unknown one', async () => {
    await createSubKey(t, user, { clientId: 'mobile', accountId: 'acct-0' });
    expectProblem(
      await t.http().delete('/profile/acct-0').set('X-Api-Key', user.apiKey),
      409,
      'AMBIGUOUS_MATCH',
    );
    await t
      .http()
      .delete('/profile/acct-0')
      .query({ clientId: 'mobile' })
      .set('X-Api-Key', user.apiKey)
      .expect(204);
    await t.http().get('/profile/acct-0').set('X-Api-Key', user.apiKey).expect(200);
    expectProblem(
      await t.http().delete('/profile/nobody').set('X-Api-Key', user.apiKey),
      404,
      'PROFILE_NOT_FOUND',
    );
  });

  it('with purgeData=true deletes the items it owned in every collection of its branch', async () => {
    const doomed = await createSubKey(t, user, { clientId: 'web', accountId: 'acct-purge' });
    const keeper = await createSubKey(t, user, { clientId: 'web', accountId: 'acct-keep' });
    const staging = await createSubKey(t, user, {
      clientId: 'web',
      accountId: 'acct-purge',
      branch: 'staging',
    });
    const write = (key: string, collection: string, item: object, branch = '') =>
      t
        .http()
        .post(`/data/${collection}`)
        .set('X-Api-Key', key)
        .set('X-Branch', branch)
        .send({ item })
        .expect(200);
    await write(doomed.apiKey, 'purge-a', { _id: 'a1' });
    await write(doomed.apiKey, 'purge-a', { _id: 'a2' });
    await write(doomed.apiKey, 'purge-b', { _id: 'b1' });
    await write(keeper.apiKey, 'purge-a', { _id: 'k1' });
    // The same accountId in another branch, and an item filed under another owner field.
    await write(staging.apiKey, 'purge-a', { _id: 's1' }, 'staging');
    await write(user.apiKey, 'purge-b', { _id: 'r1', ownerId: 'acct-purge' });

    const res = await t
      .http()
      .delete('/profile/acct-purge')
      .query({ clientId: 'web', purgeData: 'true' })
      .set('X-Api-Key', user.apiKey)
      .expect(204);
    expect(res.headers['x-items-deleted']).toBe('3');

    const ids = async (collection: string, branch = '') =>
      (
        (
          await t
            .http()
            .get(`/data/${collection}`)
            .set('X-Api-Key', user.apiKey)
            .set('X-Branch', branch)
        ).body as { _id: string }[]
      ).map((i) => i._id);
    expect(await ids('purge-a')).toEqual(['k1']);
    expect(await ids('purge-b')).toEqual(['r1']);
    expect(await ids('purge-a', 'staging')).toEqual(['s1']);
    expectProblem(
      await t.http().get('/profile').set('X-Api-Key', doomed.apiKey),
      401,
      'UNAUTHENTICATED',
    );
  });

  it('purges by the named authField', async () => {
    const doomed = await createSubKey(t, user, { clientId: 'web', accountId: 'acct-field' });
    await t
      .http()
      .post('/data/by-field')
      .set('X-Api-Key', doomed.apiKey)
      .send({ item: { _id: 'f1' }, authField: 'ownerId' })
      .expect(200);
    await t
      .http()
      .post('/data/by-field')
      .set('X-Api-Key', doomed.apiKey)
      .send({ item: { _id: 'f2' } })
      .expect(200);
    const res = await t
      .http()
      .delete('/profile/acct-field')
      .query({ clientId: 'web', purgeData: 'true', authField: 'ownerId' })
      .set('X-Api-Key', user.apiKey)
      .expect(204);
    expect(res.headers['x-items-deleted']).toBe('1');
    const left = await t.http().get('/data/by-field').set('X-Api-Key', user.apiKey).expect(200);
    expect((left.body as { _id: string }[]).map((i) => i._id)).toEqual(['f2']);
  });

  it('refuses a bad purgeData or authField before deleting anything', async () => {
    const sub = await createSubKey(t, user, { clientId: 'web', accountId: 'acct-bad' });
    for (const query of [
      { purgeData: 'yes' },
      { purgeData: 'true', authField: '$where' },
      { purgeData: 'true', authField: '_createdAt' },
      { authField: 'ownerId' },
    ]) {
      const res = await t
        .http()
        .delete('/profile/acct-bad')
        .query({ clientId: 'web', ...query })
        .set('X-Api-Key', user.apiKey);
      expectProblem(res, 400, 'VALIDATION_FAILED');
    }
    await t.http().get('/profile').set('X-Api-Key', sub.apiKey).expect(200);
  });

  it('is for root keys only', async () => {
    const sub = subs[0] as TestSubProfile;
    expectProblem(
      await t.http().delete(`/profile/${sub.accountId}`).set('X-Api-Key', sub.apiKey),
      403,
      'FORBIDDEN',
    );
    await t.http().get('/profile').set('X-Api-Key', sub.apiKey).expect(200);
  });
});
