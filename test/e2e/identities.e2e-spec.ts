import type { CommandStartedEvent } from 'mongodb';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { randomBytes, randomUUID } from 'node:crypto';
import { identityIdOf } from '../../src/identity/identity-id';
import { tenantDatabaseName } from '../../src/placement';
import { exportAs } from '../support/ndjson';
import { createTestApp, TEST_ADMIN_KEY, uniqueDbName, type TestApp } from '../support/app';
import { addTeamMember, createTeam, createUser } from '../support/factories';
import { expectProblem } from '../support/problems';
import { SseClient } from '../support/sse';
import { TestTokenIssuer } from '../support/token-issuer';
import { until } from '../support/until';

/**
 * Identities of identity providers (src/identity): who a token is — provisioned on first use or
 * linked by the operator — which profile its client acts as, and that two issuers, two instances,
 * linking and erasure keep tenants apart and users single.
 */
const AUDIENCE = 'profile-api';
const ROOT_CLIENT = 'app-root';
const RIGHTS_CHECK_MS = 300;

let a: TestTokenIssuer;
let b: TestTokenIssuer;
/** An issuer that does not provision: only linked identities are accepted. */
let closed: TestTokenIssuer;
let t: TestApp;
/** A second instance on the same database. */
let t2: TestApp;

beforeAll(async () => {
  [a, b, closed] = await Promise.all([
    TestTokenIssuer.start(),
    TestTokenIssuer.start(),
    TestTokenIssuer.start(),
  ]);
  const env = {
    MONGODB_DB_NAME: uniqueDbName(__filename),
    // Database commands are observable (commandStarted), for the cost of a cached token.
    METRICS_DATABASE_COMMANDS: 'true',
    // Open streams re-check their rights this often (the identity's existence, uncached).
    STREAM_RIGHTS_CHECK_MS: String(RIGHTS_CHECK_MS),
    EVENTS_HEARTBEAT_MS: '300',
    OIDC_ISSUERS: JSON.stringify([
      a.config(AUDIENCE, { rootClients: [ROOT_CLIENT], provision: true }),
      b.config(AUDIENCE, { rootClients: [ROOT_CLIENT], provision: true }),
      closed.config(AUDIENCE, { rootClients: [ROOT_CLIENT], provision: false }),
    ]),
  };
  t = await createTestApp(__filename, env);
  t2 = await createTestApp(__filename, env);
  await t2.app.listen(0, '127.0.0.1');
});
afterAll(async () => {
  await t2?.app.close();
  await t?.close();
  await Promise.all([a, b, closed].map((issuer) => issuer?.stop()));
});

const unique = (prefix: string) => `${prefix}-${randomBytes(4).toString('hex')}`;

/** A token of `issuer` for `sub` from `client` (default the root client), with extra claims. */
const token = (
  issuer: TestTokenIssuer,
  sub: string,
  options: { client?: string | null; claims?: Record<string, unknown> } = {},
) => {
  const client = options.client === undefined ? ROOT_CLIENT : options.client;
  return issuer.token(sub, AUDIENCE, {
    claims: { ...(client !== null ? { azp: client } : {}), ...options.claims },
  });
};

const bearer = (app: TestApp, jwt: string) => ({
  get: (path: string) => app.http().get(path).set('Authorization', `Bearer ${jwt}`),
  post: (path: string, body: object) =>
    app.http().post(path).set('Authorization', `Bearer ${jwt}`).send(body),
});

const admin = () => ({
  get: (path: string) => t.http().get(path).set('X-Api-Key', TEST_ADMIN_KEY),
  put: (path: string, body: unknown) =>
    t
      .http()
      .put(path)
      .set('X-Api-Key', TEST_ADMIN_KEY)
      .send(body as object),
});

const identities = () => t.connection.collection('identities');

describe('provisioning', () => {
  it('makes two tenants of two issuers that issue the same subject, neither seeing the other', async () => {
    const sub = unique('same');
    const fromA = await token(a, sub, { claims: { email: `${sub}@a.example.com` } });
    const fromB = await token(b, sub, { claims: { email: `${sub}@b.example.com` } });
    const meA = (await bearer(t, fromA).get('/me').expect(200)).body;
    const meB = (await bearer(t, fromB).get('/me').expect(200)).body;
    expect(meA.kind).toBe('root');
    expect(meB.kind).toBe('root');
    expect(meA.subject).not.toBe(meB.subject);
    await bearer(t, fromA)
      .post('/data/notes', { item: { _id: 'n1', text: 'of a' } })
      .expect(200);
    await bearer(t, fromB).get('/data/notes/_id/n1').expect(404);
    expect((await bearer(t, fromB).get('/data/notes/count').expect(200)).body).toEqual({
      count: 0,
    });
    expect((await bearer(t, fromA).get('/data/notes/_id/n1').expect(200)).body.text).toBe('of a');
    // Each user has its token's email and one provisioned identity.
    const userA = (await admin().get(`/admin/users/${meA.subject}`).expect(200)).body;
    expect(userA.profile.email).toBe(`${sub}@a.example.com`);
    expect(userA.identities).toEqual([
      { issuer: a.issuer, subject: sub, createdAt: expect.any(String), how: 'provisioned' },
    ]);
  });

  it('makes one user of 20 concurrent first requests of one identity through two instances', async () => {
    const sub = unique('burst');
    const email = `${sub}@example.com`;
    const jwt = await token(a, sub, { claims: { email } });
    const answers = await Promise.all(
      Array.from({ length: 20 }, (_, i) => bearer(i % 2 === 0 ? t : t2, jwt).get('/me')),
    );
    expect(answers.map((res) => res.status)).toEqual(Array(20).fill(200));
    const subjects = new Set(answers.map((res) => res.body.subject));
    expect(subjects.size).toBe(1);
    const [subject] = [...subjects];
    expect(await t.connection.collection('users').countDocuments({ email })).toBe(1);
    expect(await t.connection.collection('profiles').countDocuments({ subject })).toBe(1);
    expect(await identities().countDocuments({ issuer: a.issuer, subject: sub })).toBe(1);
  });

  it('completes a provisioning that stopped after the claim or after the registration', async () => {
    for (const stoppedAfter of ['claim', 'registration'] as const) {
      const sub = unique(`resumed-${stoppedAfter}`);
      const email = `${sub}@example.com`;
      const subject = randomUUID();
      const id = identityIdOf(a.issuer, sub);
      await identities().insertOne({
        _id: id,
        issuer: a.issuer,
        subject: sub,
        userSubject: subject,
        how: 'provisioned',
        settled: false,
        createdAt: new Date(),
      } as never);
      if (stoppedAfter === 'registration')
        await t.connection
          .collection('users')
          .insertOne({ _id: subject, email, createdAt: new Date() } as never);
      const me = (
        await bearer(t, await token(a, sub, { claims: { email } }))
          .get('/me')
          .expect(200)
      ).body;
      expect(me.subject).toBe(subject);
      expect(await t.connection.collection('users').countDocuments({ _id: subject } as never)).toBe(
        1,
      );
      expect(await t.connection.collection('profiles').countDocuments({ subject })).toBe(1);
      expect(
        await t.connection.collection('tenant_placements').countDocuments({
          _id: tenantDatabaseName(t.config.database.dbName, { kind: 'user', id: subject }),
        } as never),
      ).toBe(1);
      expect(await identities().findOne({ _id: id } as never)).toMatchObject({ settled: true });
    }
  });

  it('gives a token without an email claim a placeholder email and refuses an email another user has', async () => {
    const sub = unique('noemail');
    const me = (
      await bearer(t, await token(a, sub))
        .get('/me')
        .expect(200)
    ).body;
    const user = (await admin().get(`/admin/users/${me.subject}`).expect(200)).body;
    expect(user.profile.email).toMatch(/^[0-9a-f]{64}@identities\.invalid$/);
    // A claim that is no email address counts as none.
    const odd = unique('oddemail');
    const oddMe = (
      await bearer(t, await token(a, odd, { claims: { email: 'not an email' } }))
        .get('/me')
        .expect(200)
    ).body;
    const oddUser = (await admin().get(`/admin/users/${oddMe.subject}`).expect(200)).body;
    expect(oddUser.profile.email).toMatch(/^[0-9a-f]{64}@identities\.invalid$/);

    const existing = await createUser(t);
    const taken = await token(a, unique('taker'), { claims: { email: existing.email } });
    const res = await bearer(t, taken).get('/me');
    expectProblem(res, 403, 'IDENTITY_EMAIL_TAKEN');
    // Nothing of the refused identity stays: no claim, no user merged into.
    expect(await identities().countDocuments({ userSubject: existing.subject })).toBe(0);
    expect(await t.connection.collection('users').countDocuments({ email: existing.email })).toBe(
      1,
    );
  });

  it('refuses an unknown identity of an issuer that does not provision with 403 UNKNOWN_IDENTITY', async () => {
    const res = await bearer(t, await token(closed, unique('stranger'))).get('/me');
    expectProblem(res, 403, 'UNKNOWN_IDENTITY');
    expect(await identities().countDocuments({ issuer: closed.issuer })).toBe(0);
  });
});

describe('principals', () => {
  it('acts as the root profile for a root client and as its sub profile for another client', async () => {
    const sub = unique('clients');
    const root = await token(a, sub);
    const mobile = await token(a, sub, { client: 'mobile' });
    const rootMe = (await bearer(t, root).get('/me').expect(200)).body;
    const subMe = (await bearer(t, mobile).get('/me').expect(200)).body;
    expect(subMe).toMatchObject({
      kind: 'sub',
      subject: rootMe.subject,
      clientId: 'mobile',
      accountId: sub,
    });
    // The sub profile was created on first use, once.
    const listed = (await bearer(t, root).get('/profiles').expect(200)).body;
    expect(
      listed.map((p: { clientId: string; accountId: string }) => [p.clientId, p.accountId]),
    ).toEqual([['mobile', sub]]);
    // Its items are stamped with its accountId and are its own.
    const written = await bearer(t, mobile)
      .post('/data/inbox', { item: { _id: 'm1', userId: 'someone-else' } })
      .expect(200);
    expect(written.body.userId).toBe(sub);
    await bearer(t, root)
      .post('/data/inbox', { item: { _id: 'r1', userId: 'someone-else' } })
      .expect(200);
    await bearer(t, mobile).get('/data/inbox/_id/r1').expect(404);
    expect((await bearer(t, root).get('/data/inbox/count').expect(200)).body).toEqual({ count: 2 });
  });

  it('makes one sub profile of 10 concurrent first requests of a client through two instances', async () => {
    const sub = unique('subburst');
    const subject = (
      await bearer(t, await token(a, sub))
        .get('/me')
        .expect(200)
    ).body.subject;
    const jwt = await token(a, sub, { client: 'tablet' });
    const answers = await Promise.all(
      Array.from({ length: 10 }, (_, i) => bearer(i % 2 === 0 ? t : t2, jwt).get('/me')),
    );
    expect(answers.map((res) => res.status)).toEqual(Array(10).fill(200));
    expect(new Set(answers.map((res) => res.body.profileId)).size).toBe(1);
    expect(
      await t.connection.collection('profiles').countDocuments({ subject, clientId: 'tablet' }),
    ).toBe(1);
  });

  it('refuses a token naming no client with 401 INVALID_TOKEN, provisioning nothing', async () => {
    const sub = unique('noclient');
    const res = await bearer(t, await token(a, sub, { client: null })).get('/me');
    expectProblem(res, 401, 'INVALID_TOKEN');
    expect(res.headers['www-authenticate']).toMatch(/error="invalid_token".*names no client/);
    expect(await identities().countDocuments({ subject: sub })).toBe(0);
  });

  it('refuses a sub client of an issuer that does not provision while its sub profile does not exist', async () => {
    const user = await createUser(t);
    const sub = unique('linked-sub');
    await admin()
      .put(`/admin/users/${user.subject}/identities`, [{ issuer: closed.issuer, subject: sub }])
      .expect(200);
    const res = await bearer(t, await token(closed, sub, { client: 'mobile' })).get('/me');
    expectProblem(res, 403, 'TOKEN_PROFILE_NOT_FOUND');
    expect(
      (
        await bearer(t, await token(closed, sub))
          .get('/me')
          .expect(200)
      ).body.subject,
    ).toBe(user.subject);
  });

  it('lets a root token act for a team with X-Team and in a branch with X-Branch', async () => {
    const sub = unique('teamer');
    const root = await token(a, sub);
    const subject = (await bearer(t, root).get('/me').expect(200)).body.subject;
    const team = await createTeam(t);
    await addTeamMember(t, team, { subject }, 'admin');
    const asTeam = (await bearer(t, root).get('/me').set('X-Team', team.teamId).expect(200)).body;
    expect(asTeam).toMatchObject({ kind: 'team', teamId: team.teamId });
    const staging = (await bearer(t, root).get('/me').set('X-Branch', 'staging').expect(200)).body;
    expect(staging).toMatchObject({ kind: 'root', subject, branch: 'staging', boundBranch: null });
    // A sub client's profile is per branch: created in staging on first use there.
    const inStaging = (
      await bearer(t, await token(a, sub, { client: 'web' }))
        .get('/me')
        .set('X-Branch', 'staging')
        .expect(200)
    ).body;
    expect(inStaging).toMatchObject({ kind: 'sub', branch: 'staging', clientId: 'web' });
    const listed = (await bearer(t, root).get('/profiles').expect(200)).body;
    expect(listed).toEqual([]);
  });

  it("shows on GET /me that a token authenticated, and limits routes to its scope claim's scopes", async () => {
    const sub = unique('scoped');
    const jwt = await token(a, sub, { claims: { scope: 'openid data:read' } });
    const me = (await bearer(t, jwt).get('/me').expect(200)).body;
    expect(me.authenticatedWith).toMatchObject({
      kind: 'token',
      issuer: a.issuer,
      tokenSubject: sub,
    });
    expect(me.scopes).toEqual(['data:read']);
    await bearer(t, jwt).get('/data/notes/count').expect(200);
    expectProblem(
      await bearer(t, jwt).post('/data/notes', { item: { x: 1 } }),
      403,
      'INSUFFICIENT_SCOPE',
    );
  });

  it('resolves a cached token without a database command on identities, users or profiles', async () => {
    const sub = unique('cached');
    const tokens = [await token(a, sub), await token(a, sub, { client: 'mobile' })];
    const read = (jwt: string) => bearer(t, jwt).get('/data/notes/count').expect(200);
    for (const jwt of tokens) await read(jwt);
    const seen: string[] = [];
    const watched = new Set(['identities', 'users', 'profiles']);
    const listener = (event: CommandStartedEvent) => {
      const target = (event.command as Record<string, unknown>)[event.commandName];
      if (typeof target === 'string' && watched.has(target))
        seen.push(`${event.commandName} ${target}`);
    };
    t.connection.getClient().on('commandStarted', listener);
    try {
      for (const jwt of tokens) await read(jwt);
    } finally {
      t.connection.getClient().off('commandStarted', listener);
    }
    expect(seen).toEqual([]);
  });

  it('keeps one rate-limit budget per identity: two tokens of it share one', async () => {
    const sub = unique('budget');
    const first = await token(a, sub);
    const second = await token(a, sub, { claims: { jti: 'other' } });
    expect(first).not.toBe(second);
    const remaining = async (jwt: string) =>
      Number((await bearer(t, jwt).get('/me').expect(200)).headers['x-ratelimit-remaining']);
    const r1 = await remaining(first);
    expect(await remaining(second)).toBe(r1 - 1);
    expect(await remaining(first)).toBe(r1 - 2);
    // Another identity has a budget of its own.
    expect(await remaining(await token(b, sub))).toBe(r1);
  });
});

describe('linking', () => {
  it("keeps a key user's data when it starts signing in with a token", async () => {
    const user = await createUser(t);
    await t
      .http()
      .post('/data/notes')
      .set('X-Api-Key', user.apiKey)
      .send({ item: { _id: 'kept', text: 'from a key' } })
      .expect(200);
    const sub = unique('linked');
    const jwt = await token(closed, sub);
    // Unknown before the link (the issuer does not provision) ...
    expectProblem(await bearer(t, jwt).get('/me'), 403, 'UNKNOWN_IDENTITY');
    const linked = await admin()
      .put(`/admin/users/${user.subject}/identities`, [{ issuer: closed.issuer, subject: sub }])
      .expect(200);
    expect(linked.body).toEqual([
      { issuer: closed.issuer, subject: sub, createdAt: expect.any(String), how: 'linked' },
    ]);
    // ... the user at once after it, on this instance, with the key's data.
    const read = await bearer(t, jwt).get('/data/notes/_id/kept').expect(200);
    expect(read.body.text).toBe('from a key');
    // Idempotent; the key keeps working.
    const again = await admin()
      .put(`/admin/users/${user.subject}/identities`, [{ issuer: closed.issuer, subject: sub }])
      .expect(200);
    expect(again.body).toEqual(linked.body);
    const detail = (await admin().get(`/admin/users/${user.subject}`).expect(200)).body;
    expect(detail.identities).toEqual(linked.body);
    await t.http().get('/me').set('X-Api-Key', user.apiKey).expect(200);
    // Unlinked: refused at once on this instance.
    expect(
      (await admin().put(`/admin/users/${user.subject}/identities`, []).expect(200)).body,
    ).toEqual([]);
    expectProblem(await bearer(t, jwt).get('/me'), 403, 'UNKNOWN_IDENTITY');
  });

  it("lists the user's identities in its account export, as GET /admin/users/{subject} does", async () => {
    const user = await createUser(t);
    const sub = unique('exported');
    const linked = (
      await admin()
        .put(`/admin/users/${user.subject}/identities`, [{ issuer: closed.issuer, subject: sub }])
        .expect(200)
    ).body as unknown[];
    const exported = await exportAs(
      t,
      TEST_ADMIN_KEY,
      {},
      { path: `/admin/users/${user.subject}/export` },
    );
    expect(exported.status).toBe(200);
    expect(exported.lines.filter((line) => line.type === 'identity')).toEqual(
      linked.map((identity) => ({ type: 'identity', identity })),
    );
  });

  it("is the key's principal for every rule: one idempotency scope, one events actor", async () => {
    const user = await createUser(t);
    const sub = unique('same-principal');
    await admin()
      .put(`/admin/users/${user.subject}/identities`, [{ issuer: closed.issuer, subject: sub }])
      .expect(200);
    const jwt = await token(closed, sub);
    const item = { item: { _id: 'once', text: 'written once' } };
    const first = await t
      .http()
      .post('/data/notes')
      .set('X-Api-Key', user.apiKey)
      .set('Idempotency-Key', 'same-principal-1')
      .send(item)
      .expect(200);
    // The retry with the user's token is the same caller's retry: the stored answer, no write.
    const retried = await bearer(t, jwt)
      .post('/data/notes', item)
      .set('Idempotency-Key', 'same-principal-1')
      .expect(200);
    expect(retried.headers['idempotent-replayed']).toBe('true');
    expect(retried.body).toEqual(first.body);
    await bearer(t, jwt)
      .post('/data/notes', { item: { _id: 'by-token', text: 'from a token' } })
      .expect(200);
    const feed = await bearer(t, jwt).get('/events?collection=notes&limit=100').expect(200);
    const actors = (feed.body.events as { resource: string; key: string; actor: unknown }[])
      .filter((event) => event.resource === 'item')
      .map((event) => [event.key, event.actor]);
    expect(actors).toEqual([
      ['once', { kind: 'root', id: user.subject }],
      ['by-token', { kind: 'root', id: user.subject }],
    ]);
  });

  it('refuses an identity of another user (409), an unknown issuer (400) and an unknown user (404), writing nothing', async () => {
    const owner = await createUser(t);
    const other = await createUser(t);
    const sub = unique('owned');
    await admin()
      .put(`/admin/users/${owner.subject}/identities`, [{ issuer: a.issuer, subject: sub }])
      .expect(200);
    const fresh = unique('fresh');
    expectProblem(
      await admin().put(`/admin/users/${other.subject}/identities`, [
        { issuer: a.issuer, subject: fresh },
        { issuer: a.issuer, subject: sub },
      ]),
      409,
      'IDENTITY_TAKEN',
    );
    expectProblem(
      await admin().put(`/admin/users/${other.subject}/identities`, [
        { issuer: 'https://elsewhere.example.com', subject: fresh },
      ]),
      400,
      'UNKNOWN_ISSUER',
    );
    expectProblem(
      await admin().put(`/admin/users/no-such-user/identities`, [
        { issuer: a.issuer, subject: fresh },
      ]),
      404,
      'PROFILE_NOT_FOUND',
    );
    expect(await identities().countDocuments({ subject: fresh })).toBe(0);
    expect(await identities().countDocuments({ userSubject: other.subject })).toBe(0);
    // The identity stays its owner's.
    const me = (
      await bearer(t, await token(a, sub))
        .get('/me')
        .expect(200)
    ).body;
    expect(me.subject).toBe(owner.subject);
  });
});

describe('open streams', () => {
  it("ends a token's stream on another instance once its identity is unlinked", async () => {
    const user = await createUser(t);
    const sub = unique('streaming');
    await admin()
      .put(`/admin/users/${user.subject}/identities`, [{ issuer: closed.issuer, subject: sub }])
      .expect(200);
    const jwt = await token(closed, sub);
    const from = (await bearer(t2, jwt).get('/data/watched')).headers['feed-position'];
    expect(from).toMatch(/^\d+$/);
    const port = ((t2.app.getHttpServer() as Server).address() as AddressInfo).port;
    const stream = await SseClient.open(port, `/events/stream?after=${from}`, {
      Authorization: `Bearer ${jwt}`,
    });
    try {
      expect(stream.status).toBe(200);
      // Open across two heartbeats (EVENTS_HEARTBEAT_MS, longer than a rights check's interval)
      // while linked: the identity is found to exist.
      await until('two heartbeats', () => stream.ended || stream.comments >= 2);
      expect(stream.ended).toBe(false);
      await admin().put(`/admin/users/${user.subject}/identities`, []).expect(200);
      const lostAt = performance.now();
      await until('the stream to end', () => stream.ended, RIGHTS_CHECK_MS + 6500);
      expect(performance.now() - lostAt).toBeLessThan(RIGHTS_CHECK_MS + 1500);
      const last = stream.events.at(-1);
      expect(last?.event).toBe('end');
      expect((JSON.parse(last?.data ?? '{}') as { reason: string }).reason).toBe(
        'IDENTITY_REMOVED',
      );
    } finally {
      stream.close();
    }
  });
});

describe('erasure', () => {
  it('removes the identities: a later token provisions a fresh, empty user once the erasure is done', async () => {
    const sub = unique('erased');
    const jwt = await token(a, sub);
    const before = (await bearer(t, jwt).get('/me').expect(200)).body.subject;
    await bearer(t, jwt)
      .post('/data/notes', { item: { _id: 'old' } })
      .expect(200);
    const erasure = await t
      .http()
      .delete(`/admin/users/${before}`)
      .set('X-Api-Key', TEST_ADMIN_KEY)
      .expect(202);
    // Gone before the answer: the token acts as the erased user no more.
    expect(await identities().countDocuments({ userSubject: before })).toBe(0);
    await until('the erasure is done', async () => {
      const res = await admin().get(`/admin/erasures/${erasure.body.id}`).expect(200);
      return res.body.status === 'done';
    });
    const after = (await bearer(t, jwt).get('/me').expect(200)).body.subject;
    expect(after).not.toBe(before);
    expect((await bearer(t, jwt).get('/data/notes/count').expect(200)).body).toEqual({ count: 0 });
  });

  it('removes the identities: without provisioning a later token is refused with 403', async () => {
    const user = await createUser(t);
    const sub = unique('erased-closed');
    await admin()
      .put(`/admin/users/${user.subject}/identities`, [{ issuer: closed.issuer, subject: sub }])
      .expect(200);
    const jwt = await token(closed, sub);
    await bearer(t, jwt).get('/me').expect(200);
    await t
      .http()
      .delete(`/admin/users/${user.subject}`)
      .set('X-Api-Key', TEST_ADMIN_KEY)
      .expect(202);
    expect(await identities().countDocuments({ userSubject: user.subject })).toBe(0);
    expectProblem(await bearer(t, jwt).get('/me'), 403, 'UNKNOWN_IDENTITY');
  });
});
