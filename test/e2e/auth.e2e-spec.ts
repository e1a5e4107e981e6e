import { createTestApp, type TestApp } from '../support/app';
import { createApiKey, createTeam, createUser } from '../support/factories';
import { holdClock, moveClock } from '../support/held-clock';
import { anonymous, as, asOperator, type Client } from '../support/http';
import { expectInvalid, expectProblem } from '../support/problems';

describe('auth, operator API and self-service keys', () => {
  let t: TestApp;
  let operator: Client;

  beforeAll(async () => {
    t = await createTestApp(__filename);
    operator = asOperator(t);
  });

  afterAll(async () => {
    await t.close();
  });

  describe('POST /admin/users', () => {
    it('creates a root profile and returns a working root key', async () => {
      const res = await operator
        .post('/admin/users', { email: 'Ada@Example.com', subject: 'auth0|ada' })
        .expect(200);
      expect(res.body.profile).toMatchObject({
        subject: 'auth0|ada',
        email: 'ada@example.com',
        accountId: '',
        clientId: '',
        branch: '',
        plans: [],
        avatar: '',
        settings: {},
        metadata: {},
        groups: [],
      });
      expect(res.body.apiKey).toMatch(/^pds_[A-Za-z0-9_-]{43}$/);
      await as(t, res.body.apiKey).get('/api-keys').expect(200);
    });

    it('generates a subject when none is given', async () => {
      const res = await operator.post('/admin/users', { email: 'gen@example.com' }).expect(200);
      expect(res.body.profile.subject).toMatch(/^[0-9a-f-]{36}$/);
    });

    it('returns 409 for a duplicate subject or email', async () => {
      await createUser(t, { subject: 'dup-subject', email: 'dup@example.com' });
      for (const body of [
        { email: 'other@example.com', subject: 'dup-subject' },
        { email: 'DUP@example.com' },
      ]) {
        expectProblem(await operator.post('/admin/users', body), 409, 'DUPLICATE_USER');
      }
    });

    it('returns 400 listing every invalid field', async () => {
      const res = await operator.post('/admin/users', {
        email: 'not-an-email',
        subject: 'has spaces',
        extra: 1,
      });
      expectInvalid(res, 'email', 'extra', 'subject');
    });

    it('refuses customer keys with 403', async () => {
      const user = await createUser(t);
      const res = await as(t, user).post('/admin/users', { email: 'x@example.com' });
      expectProblem(res, 403, 'FORBIDDEN');
    });
  });

  describe('POST /admin/teams', () => {
    it('creates a team with a team key', async () => {
      const res = await operator.post('/admin/teams', { name: 'Platform' }).expect(200);
      expect(res.body.team).toEqual({
        id: expect.any(String),
        name: 'Platform',
        createdAt: expect.any(String),
      });
      expect(res.body.apiKey).toMatch(/^pds_/);
    });
  });

  describe('PUT /admin/users/{subject}/plans', () => {
    it('replaces the plans of the root profile', async () => {
      const user = await createUser(t);
      const res = await operator
        .put(`/admin/users/${encodeURIComponent(user.subject)}/plans`, [
          {
            planName: 'pro',
            since: '2026-01-01T00:00:00Z',
            until: '2027-01-01T00:00:00Z',
            metadata: { seats: 5 },
          },
        ])
        .expect(200);
      expect(res.body.plans).toEqual([
        {
          planName: 'pro',
          since: '2026-01-01T00:00:00.000Z',
          until: '2027-01-01T00:00:00.000Z',
          metadata: { seats: 5 },
        },
      ]);
    });

    it('returns 404 for an unknown subject and 400 for until before since', async () => {
      await operator.put('/admin/users/nobody/plans', []).expect(404);
      const user = await createUser(t);
      const res = await operator
        .put(`/admin/users/${user.subject}/plans`, [
          { planName: 'p', since: '2027-01-01T00:00:00Z', until: '2026-01-01T00:00:00Z' },
        ])
        .expect(400);
      expect(res.body.errors).toEqual([
        { field: '0.until', message: 'until must not be before since' },
      ]);
    });
  });

  describe('authentication', () => {
    it('answers 401 problem+json without a key, with a wrong key and with a revoked key', async () => {
      const user = await createUser(t);
      const none = await anonymous(t).get('/api-keys');
      expectProblem(none, 401, 'UNAUTHENTICATED');
      expect(none.body.type).toBe('urn:problem:unauthenticated');
      await as(t, 'pds_wrong').get('/api-keys').expect(401);

      const created = await createApiKey(t, user, { name: 'temp' });
      await as(t, created).get('/api-keys').expect(200);
      await as(t, user).delete(`/api-keys/${created.key.id}`).expect(204);
      expectProblem(await as(t, created).get('/api-keys'), 401, 'UNAUTHENTICATED');
    });

    it('accepts the key as a bearer token', async () => {
      const user = await createUser(t);
      const bearer = (key: string) => ({ headers: { Authorization: `Bearer ${key}` } });
      await anonymous(t).get('/api-keys', bearer(user.apiKey)).expect(200);
      await anonymous(t).get('/api-keys', bearer('pds_nope')).expect(401);
    });

    it('reads a JWT-shaped bearer as an unknown API key when OIDC_ISSUERS is unset', async () => {
      const header = Buffer.from('{"alg":"RS256","typ":"at+jwt"}').toString('base64url');
      const payload = Buffer.from('{"sub":"alice","aud":"api"}').toString('base64url');
      const res = await anonymous(t).get('/api-keys', {
        headers: { Authorization: `Bearer ${header}.${payload}.c2lnbmF0dXJl` },
      });
      expectProblem(res, 401, 'UNAUTHENTICATED');
      expect(res.headers['www-authenticate']).toBeUndefined();
    });

    it('refuses an expired key', async () => {
      const user = await createUser(t);
      // The app's clock stands still until the test moves it past the expiry: the key is used
      // before it however slow the requests are.
      holdClock();
      try {
        const expiresAt = new Date(Date.now() + 1500).toISOString();
        const created = await createApiKey(t, user, { expiresAt });
        await as(t, created).get('/api-keys').expect(200);
        moveClock(1500);
        const res = await as(t, created).get('/api-keys').expect(401);
        expect(res.body.detail).toMatch(/expired/);
      } finally {
        jest.useRealTimers();
      }
    });

    it('answers 403 for an operator key on /api-keys and for a team key on /api-keys', async () => {
      expectProblem(await operator.get('/api-keys'), 403, 'FORBIDDEN');
      await as(t, await createTeam(t))
        .get('/api-keys')
        .expect(403);
    });
  });

  describe('GET/POST/DELETE /api-keys', () => {
    it('lists metadata without secrets and shows the secret once', async () => {
      const user = await createUser(t);
      const created = await createApiKey(t, user, { name: 'ci' });
      expect(created.key).toMatchObject({
        name: 'ci',
        kind: 'root',
        branch: null,
        expiresAt: null,
      });
      expect(created.apiKey.startsWith(created.key.prefix)).toBe(true);
      const list = await as(t, user).get('/api-keys').expect(200);
      expect(list.body).toHaveLength(2);
      expect(JSON.stringify(list.body)).not.toContain(created.apiKey);
      expect(list.body[0]).not.toHaveProperty('digest');
    });

    it('does not let one user see or revoke another user’s keys', async () => {
      const alice = as(t, await createUser(t));
      const bob = as(t, await createUser(t));
      const aliceKeys = await alice.get('/api-keys').expect(200);
      const bobKeys = await bob.get('/api-keys').expect(200);
      expect(bobKeys.body.map((k: { id: string }) => k.id)).not.toContain(aliceKeys.body[0].id);
      await bob.delete(`/api-keys/${aliceKeys.body[0].id}`).expect(404);
      await bob.delete('/api-keys/not-an-id').expect(404);
      await alice.get('/api-keys').expect(200);
    });

    it('rejects clientId without accountId, past expiry and a sub key for a missing sub profile', async () => {
      const api = as(t, await createUser(t));
      const half = await api.post('/api-keys', { clientId: 'app' }).expect(400);
      expect(half.body.errors[0].field).toBe('accountId');
      await api.post('/api-keys', { expiresAt: '2000-01-01T00:00:00Z' }).expect(400);
      const missing = await api.post('/api-keys', { clientId: 'app', accountId: 'nobody' });
      expectProblem(missing, 404, 'PROFILE_NOT_FOUND');
    });
  });

  describe('branches', () => {
    it('rejects an invalid X-Branch with 400 and a contradicting one with 403', async () => {
      const user = await createUser(t);
      const invalid = await as(t, user).get('/api-keys', { branch: 'Bad Branch' });
      expectProblem(invalid, 400, 'INVALID_BRANCH');
      const bound = await createApiKey(t, user, { branch: 'staging' });
      expect(bound.key.branch).toBe('staging');
      await as(t, bound).get('/api-keys', { branch: 'staging' }).expect(200);
      const mismatch = await as(t, bound).get('/api-keys', { branch: 'prod' });
      expectProblem(mismatch, 403, 'BRANCH_MISMATCH');
    });
  });
});
