import { createTestApp, TEST_ADMIN_KEY, type TestApp } from '../support/app';
import { createTeam, createUser } from '../support/factories';

describe('auth, operator API and self-service keys', () => {
  let t: TestApp;

  beforeAll(async () => {
    t = await createTestApp(__filename);
  });

  afterAll(async () => {
    await t.close();
  });

  describe('POST /admin/users', () => {
    it('creates a root profile and returns a working root key', async () => {
      const res = await t
        .http()
        .post('/admin/users')
        .set('X-Api-Key', TEST_ADMIN_KEY)
        .send({ email: 'Ada@Example.com', subject: 'auth0|ada' })
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
      await t.http().get('/api-keys').set('X-Api-Key', res.body.apiKey).expect(200);
    });

    it('generates a subject when none is given', async () => {
      const res = await t
        .http()
        .post('/admin/users')
        .set('X-Api-Key', TEST_ADMIN_KEY)
        .send({ email: 'gen@example.com' })
        .expect(200);
      expect(res.body.profile.subject).toMatch(/^[0-9a-f-]{36}$/);
    });

    it('returns 409 for a duplicate subject or email', async () => {
      await createUser(t, { subject: 'dup-subject', email: 'dup@example.com' });
      const sameSubject = await t
        .http()
        .post('/admin/users')
        .set('X-Api-Key', TEST_ADMIN_KEY)
        .send({ email: 'other@example.com', subject: 'dup-subject' })
        .expect(409);
      expect(sameSubject.body.code).toBe('DUPLICATE_USER');
      const sameEmail = await t
        .http()
        .post('/admin/users')
        .set('X-Api-Key', TEST_ADMIN_KEY)
        .send({ email: 'DUP@example.com' })
        .expect(409);
      expect(sameEmail.body.code).toBe('DUPLICATE_USER');
    });

    it('returns 400 listing every invalid field', async () => {
      const res = await t
        .http()
        .post('/admin/users')
        .set('X-Api-Key', TEST_ADMIN_KEY)
        .send({ email: 'not-an-email', subject: 'has spaces', extra: 1 })
        .expect(400);
      expect(res.headers['content-type']).toMatch(/^application\/problem\+json/);
      const fields = (res.body.errors as { field: string }[]).map((e) => e.field).sort();
      expect(fields).toEqual(expect.arrayContaining(['email', 'extra', 'subject']));
    });

    it('refuses customer keys with 403', async () => {
      const user = await createUser(t);
      const res = await t
        .http()
        .post('/admin/users')
        .set('X-Api-Key', user.apiKey)
        .send({ email: 'x@example.com' })
        .expect(403);
      expect(res.body.code).toBe('FORBIDDEN');
    });
  });

  describe('POST /admin/teams', () => {
    it('creates a team with a team key', async () => {
      const res = await t
        .http()
        .post('/admin/teams')
        .set('X-Api-Key', TEST_ADMIN_KEY)
        .send({ name: 'Platform' })
        .expect(200);
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
      const res = await t
        .http()
        .put(`/admin/users/${encodeURIComponent(user.subject)}/plans`)
        .set('X-Api-Key', TEST_ADMIN_KEY)
        .send([
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
      await t
        .http()
        .put('/admin/users/nobody/plans')
        .set('X-Api-Key', TEST_ADMIN_KEY)
        .send([])
        .expect(404);
      const user = await createUser(t);
      const res = await t
        .http()
        .put(`/admin/users/${user.subject}/plans`)
        .set('X-Api-Key', TEST_ADMIN_KEY)
        .send([{ planName: 'p', since: '2027-01-01T00:00:00Z', until: '2026-01-01T00:00:00Z' }])
        .expect(400);
      expect(res.body.errors).toEqual([
        { field: '0.until', message: 'until must not be before since' },
      ]);
    });
  });

  describe('authentication', () => {
    it('answers 401 problem+json without a key, with a wrong key and with a revoked key', async () => {
      const user = await createUser(t);
      const none = await t.http().get('/api-keys').expect(401);
      expect(none.headers['content-type']).toMatch(/^application\/problem\+json/);
      expect(none.body).toMatchObject({
        status: 401,
        code: 'UNAUTHENTICATED',
        type: 'urn:problem:unauthenticated',
      });
      await t.http().get('/api-keys').set('X-Api-Key', 'pds_wrong').expect(401);

      const created = await t
        .http()
        .post('/api-keys')
        .set('X-Api-Key', user.apiKey)
        .send({ name: 'temp' })
        .expect(200);
      await t.http().get('/api-keys').set('X-Api-Key', created.body.apiKey).expect(200);
      await t
        .http()
        .delete(`/api-keys/${created.body.key.id}`)
        .set('X-Api-Key', user.apiKey)
        .expect(204);
      const revoked = await t
        .http()
        .get('/api-keys')
        .set('X-Api-Key', created.body.apiKey)
        .expect(401);
      expect(revoked.body.code).toBe('UNAUTHENTICATED');
    });

    it('accepts the key as a bearer token', async () => {
      const user = await createUser(t);
      await t.http().get('/api-keys').set('Authorization', `Bearer ${user.apiKey}`).expect(200);
      await t.http().get('/api-keys').set('Authorization', 'Bearer pds_nope').expect(401);
    });

    it('refuses an expired key', async () => {
      const user = await createUser(t);
      const expiresAt = new Date(Date.now() + 1500).toISOString();
      const created = await t
        .http()
        .post('/api-keys')
        .set('X-Api-Key', user.apiKey)
        .send({ expiresAt })
        .expect(200);
      await t.http().get('/api-keys').set('X-Api-Key', created.body.apiKey).expect(200);
      await new Promise((r) => setTimeout(r, 1600));
      const res = await t.http().get('/api-keys').set('X-Api-Key', created.body.apiKey).expect(401);
      expect(res.body.detail).toMatch(/expired/);
    });

    it('answers 403 for an operator key on /api-keys and for a team key on /api-keys', async () => {
      const op = await t.http().get('/api-keys').set('X-Api-Key', TEST_ADMIN_KEY).expect(403);
      expect(op.body.code).toBe('FORBIDDEN');
      const team = await createTeam(t);
      await t.http().get('/api-keys').set('X-Api-Key', team.apiKey).expect(403);
    });
  });

  describe('GET/POST/DELETE /api-keys', () => {
    it('lists metadata without secrets and shows the secret once', async () => {
      const user = await createUser(t);
      const created = await t
        .http()
        .post('/api-keys')
        .set('X-Api-Key', user.apiKey)
        .send({ name: 'ci' })
        .expect(200);
      expect(created.body.key).toMatchObject({
        name: 'ci',
        kind: 'root',
        branch: null,
        expiresAt: null,
      });
      expect(created.body.apiKey.startsWith(created.body.key.prefix)).toBe(true);
      const list = await t.http().get('/api-keys').set('X-Api-Key', user.apiKey).expect(200);
      expect(list.body).toHaveLength(2);
      expect(JSON.stringify(list.body)).not.toContain(created.body.apiKey);
      expect(list.body[0]).not.toHaveProperty('digest');
    });

    it('does not let one user see or revoke another user’s keys', async () => {
      const alice = await createUser(t);
      const bob = await createUser(t);
      const aliceKeys = await t.http().get('/api-keys').set('X-Api-Key', alice.apiKey).expect(200);
      const bobKeys = await t.http().get('/api-keys').set('X-Api-Key', bob.apiKey).expect(200);
      expect(bobKeys.body.map((k: { id: string }) => k.id)).not.toContain(aliceKeys.body[0].id);
      await t
        .http()
        .delete(`/api-keys/${aliceKeys.body[0].id}`)
        .set('X-Api-Key', bob.apiKey)
        .expect(404);
      await t.http().delete('/api-keys/not-an-id').set('X-Api-Key', bob.apiKey).expect(404);
      await t.http().get('/api-keys').set('X-Api-Key', alice.apiKey).expect(200);
    });

    it('rejects clientId without accountId, past expiry and a sub key for a missing sub profile', async () => {
      const user = await createUser(t);
      const half = await t
        .http()
        .post('/api-keys')
        .set('X-Api-Key', user.apiKey)
        .send({ clientId: 'app' })
        .expect(400);
      expect(half.body.errors[0].field).toBe('accountId');
      await t
        .http()
        .post('/api-keys')
        .set('X-Api-Key', user.apiKey)
        .send({ expiresAt: '2000-01-01T00:00:00Z' })
        .expect(400);
      const missing = await t
        .http()
        .post('/api-keys')
        .set('X-Api-Key', user.apiKey)
        .send({ clientId: 'app', accountId: 'nobody' })
        .expect(404);
      expect(missing.body.code).toBe('PROFILE_NOT_FOUND');
    });
  });

  describe('branches', () => {
    it('rejects an invalid X-Branch with 400 and a contradicting one with 403', async () => {
      const user = await createUser(t);
      const invalid = await t
        .http()
        .get('/api-keys')
        .set('X-Api-Key', user.apiKey)
        .set('X-Branch', 'Bad Branch')
        .expect(400);
      expect(invalid.body.code).toBe('INVALID_BRANCH');
      const bound = await t
        .http()
        .post('/api-keys')
        .set('X-Api-Key', user.apiKey)
        .send({ branch: 'staging' })
        .expect(200);
      expect(bound.body.key.branch).toBe('staging');
      await t
        .http()
        .get('/api-keys')
        .set('X-Api-Key', bound.body.apiKey)
        .set('X-Branch', 'staging')
        .expect(200);
      const mismatch = await t
        .http()
        .get('/api-keys')
        .set('X-Api-Key', bound.body.apiKey)
        .set('X-Branch', 'prod')
        .expect(403);
      expect(mismatch.body.code).toBe('BRANCH_MISMATCH');
    });
  });
});
