import type { CommandStartedEvent, ObjectId } from 'mongodb';
import type { Test } from 'supertest';
import { createTestApp, testDatabaseUri, type TestApp } from '../support/app';
import {
  addTeamMember,
  createApiKey,
  createTeam,
  createUser,
  type TestApiKey,
  type TestUser,
} from '../support/factories';
import { holdClock, moveClock } from '../support/held-clock';
import { as } from '../support/http';
import { errorFields, expectInvalid, expectProblem } from '../support/problems';
import { until } from '../support/until';
import { startWireProxy, type WireProxy } from '../support/wire-proxy';

interface ListedKey {
  id: string;
  name: string;
  kind: string;
  branch: string | null;
  expiresAt: string | null;
  scopes: string[] | null;
  collections: Record<string, 'read' | 'write'> | null;
  allowedIps: string[] | null;
  lastUsedAt: string | null;
}

const LIMITS = {
  scopes: ['data:read', 'keys:manage', 'profile:write'],
  collections: { orders: 'read', 'notes*': 'write' },
  allowedIps: ['0.0.0.0/0', '::/0'],
};

describe('API keys with scopes, collection and address limits', () => {
  let t: TestApp;
  let proxy: WireProxy;
  /** The key ids of the `update` statements sent to api_keys, in order. */
  const keyUpdates: string[] = [];

  beforeAll(async () => {
    proxy = await startWireProxy(testDatabaseUri());
    t = await createTestApp(__filename, {
      MONGODB_URI: proxy.uri,
      METRICS_DATABASE_COMMANDS: 'true',
      API_KEY_MAX_COLLECTIONS: '3',
    });
    t.connection.getClient().on('commandStarted', (event: CommandStartedEvent) => {
      const command = event.command as { update?: string; updates?: { q: { _id?: ObjectId } }[] };
      if (event.commandName !== 'update' || command.update !== 'api_keys') return;
      for (const statement of command.updates ?? [])
        keyUpdates.push(statement.q._id?.toHexString() ?? '');
    });
  });

  afterAll(async () => {
    jest.useRealTimers();
    await t.close();
    await proxy.close();
  });

  afterEach(() => jest.useRealTimers());

  async function listKeys(owner: TestUser | string): Promise<ListedKey[]> {
    return (await as(t, owner).get('/api-keys').expect(200)).body as ListedKey[];
  }

  async function listed(owner: TestUser, id: string): Promise<ListedKey | undefined> {
    return (await listKeys(owner)).find((key) => key.id === id);
  }

  describe('creation', () => {
    it('stores the limits and shows them in the list, on the new key and in GET /me', async () => {
      const user = await createUser(t);
      const limited = await createApiKey(t, user, { name: 'nightly', ...LIMITS });
      expect(limited.key).toMatchObject(LIMITS);

      expect(await listed(user, limited.key.id)).toMatchObject({
        name: 'nightly',
        ...LIMITS,
        expiresAt: null,
      });
      const me = await as(t, limited).get('/me').expect(200);
      expect(me.body.key).toMatchObject({ id: limited.key.id, ...LIMITS });
    });

    it('gives no limit for absent and explicit null members, and shows null', async () => {
      const user = await createUser(t);
      const explicit = await createApiKey(t, user, {
        scopes: null,
        collections: null,
        allowedIps: null,
      });
      const unlimited = { scopes: null, collections: null, allowedIps: null };
      expect(explicit.key).toMatchObject(unlimited);
      const keys = await listKeys(user);
      expect(keys).toHaveLength(2);
      for (const key of keys) expect(key).toMatchObject(unlimited);
      expect((await as(t, user).get('/me').expect(200)).body.key).toMatchObject(unlimited);
    });

    it('takes an empty scope list as a key with no scope', async () => {
      const user = await createUser(t);
      const none = await createApiKey(t, user, { scopes: [] });
      expect((await listed(user, none.key.id))?.scopes).toEqual([]);
    });

    it('refuses an unknown scope with 400 UNKNOWN_SCOPE naming it', async () => {
      const user = await createUser(t);
      const res = await as(t, user)
        .post('/api-keys', { scopes: ['data:read', 'data:delete'] })
        .expect(400);
      expectProblem(res, 400, 'UNKNOWN_SCOPE');
      expect(res.body.detail).toContain('data:delete');
      expect(res.body.detail).not.toMatch(/Unknown scopes: data:read/);
      expect(await listKeys(user)).toHaveLength(1);
    });

    it('refuses malformed patterns, access words and addresses, and too many of either', async () => {
      const user = await createUser(t);
      const bad = await as(t, user)
        .post('/api-keys', {
          collections: { 'a*b': 'read', ok: 'delete' },
          allowedIps: ['10.0.0.0/33', 'example.com'],
        })
        .expect(400);
      expectInvalid(bad, 'collections.a*b', 'collections.ok', 'allowedIps[0]', 'allowedIps[1]');

      const many = await as(t, user)
        .post('/api-keys', {
          collections: { a: 'read', b: 'read', c: 'read', d: 'read' },
          allowedIps: Array.from({ length: 21 }, (_, i) => `10.0.0.${i}`),
        })
        .expect(400);
      expect(errorFields(many)).toEqual(['allowedIps', 'collections']);
      expectInvalid(
        await as(t, user).post('/api-keys', { allowedIps: [] }).expect(400),
        'allowedIps',
      );
      expectInvalid(
        await as(t, user).post('/api-keys', { scopes: 'data:read' }).expect(400),
        'scopes',
      );
      expect(await listKeys(user)).toHaveLength(1);
    });
  });

  describe('escalation', () => {
    it('lets a limited key mint keys within its limits and refuses anything more with 403 SCOPE_ESCALATION', async () => {
      const user = await createUser(t);
      const limited = await createApiKey(t, user, LIMITS);

      const within = await createApiKey(t, limited, {
        scopes: ['data:read', 'profile:read'],
        collections: { orders: 'read', 'notes-2025*': 'write' },
        allowedIps: ['::/0'],
      });
      expect(within.key.kind).toBe('root');

      const beyond: [Record<string, unknown>, RegExp][] = [
        [{ ...LIMITS, scopes: ['data:write'] }, /data:write/],
        [{ ...LIMITS, scopes: undefined }, /all scopes/],
        [
          { ...LIMITS, collections: { orders: 'write' } },
          /write access to collections named "orders"/,
        ],
        [{ ...LIMITS, collections: { 'note*': 'read' } }, /"note\*"/],
        [{ ...LIMITS, collections: null }, /every collection/],
        [{ ...LIMITS, allowedIps: ['10.0.0.0/8'] }, /10\.0\.0\.0\/8/],
        [{ scopes: ['data:read'], collections: { orders: 'read' } }, /any address/],
      ];
      for (const [body, words] of beyond) {
        const res = await as(t, limited).post('/api-keys', body).expect(403);
        expectProblem(res, 403, 'SCOPE_ESCALATION');
        expect(res.body.detail).toMatch(words);
      }
      expect(await listKeys(user)).toHaveLength(3);
    });

    it('refuses an expiring key a key that outlives it, minted or rotated, for the user or a team', async () => {
      const user = await createUser(t);
      const team = await createTeam(t);
      await addTeamMember(t, team, user, 'admin');
      const ends = new Date(Date.now() + 3_600_000);
      const expiring = await createApiKey(t, user, { expiresAt: ends.toISOString() });
      const later = new Date(ends.getTime() + 1000).toISOString();
      for (const [path, body, words] of [
        ['/api-keys', {}, /no expiry/],
        ['/api-keys', { expiresAt: later }, /an expiry after/],
        [`/teams/${team.teamId}/api-keys`, {}, /no expiry/],
      ] as const) {
        const res = await as(t, expiring).post(path, body).expect(403);
        expectProblem(res, 403, 'SCOPE_ESCALATION');
        expect(res.body.detail).toMatch(words);
      }
      // A key that ends with it or sooner is within its rights.
      const within = await createApiKey(t, expiring, { expiresAt: ends.toISOString() });
      expect(within.key.expiresAt).toBe(ends.toISOString());
      // Rotating the user's key without expiry would hand the expiring key a lasting secret.
      const lasting = (await listKeys(user)).find((key) => key.expiresAt === null);
      const rotation = await as(t, expiring)
        .post(`/api-keys/${lasting?.id ?? ''}/rotate`, {})
        .expect(403);
      expectProblem(rotation, 403, 'SCOPE_ESCALATION');
      // The shorter-lived key it minted it may rotate.
      await as(t, expiring).post(`/api-keys/${within.key.id}/rotate`, {}).expect(200);
    });

    it('refuses a limited admin member a team key beyond its own key', async () => {
      const admin = await createUser(t);
      const team = await createTeam(t);
      await addTeamMember(t, team, admin, 'admin');
      const limited = await createApiKey(t, admin, { scopes: ['data:read', 'keys:manage'] });

      const res = await as(t, limited)
        .post(`/teams/${team.teamId}/api-keys`, { scopes: ['data:write'] })
        .expect(403);
      expectProblem(res, 403, 'SCOPE_ESCALATION');
      const ok = await as(t, limited)
        .post(`/teams/${team.teamId}/api-keys`, { scopes: ['data:read'], name: 'reader' })
        .expect(200);
      const keys = (await as(t, admin).get(`/teams/${team.teamId}/api-keys`).expect(200))
        .body as ListedKey[];
      expect(keys.map((key) => [key.name, key.scopes])).toEqual([
        ['default', null],
        ['reader', ['data:read']],
      ]);
      expect(ok.body.key.id).toBe(keys[1]?.id);
      // Nor may the limited key rotate the team's unlimited key into a secret it would hold.
      const rotation = await as(t, limited)
        .post(`/teams/${team.teamId}/api-keys/${keys[0]?.id}/rotate`, {})
        .expect(403);
      expectProblem(rotation, 403, 'SCOPE_ESCALATION');
    });
  });

  describe('lastUsedAt', () => {
    it('writes a burst of uses once per interval, never waited for by a request, and lists it', async () => {
      const user = await createUser(t);
      const key = await createApiKey(t, user, { name: 'burst' });
      const sentinel = await createApiKey(t, user, { name: 'sentinel' });
      expect((await listed(user, key.key.id))?.lastUsedAt).toBeNull();
      holdClock();
      const first = new Date();

      // The write is held at the database: the requests are answered all the same.
      proxy.hold((command) => command.update === 'api_keys');
      await Promise.all(Array.from({ length: 20 }, () => as(t, key).get('/me').expect(200)));
      await until('the burst key use is sent', () => keyUpdates.includes(key.key.id));
      expect(proxy.held()).toBe(1);
      proxy.release();
      await until(
        'the burst key use is written',
        async () => (await listed(user, key.key.id))?.lastUsedAt === first.toISOString(),
      );

      // More uses within the interval write nothing more.
      moveClock(30_000);
      await Promise.all(Array.from({ length: 10 }, () => as(t, key).get('/me').expect(200)));
      // Another key's first use, after them: written in the same batch as theirs would be, or
      // a later one (the writes are queued in order).
      await as(t, sentinel).get('/me').expect(200);
      await until('the sentinel use is written', () => keyUpdates.includes(sentinel.key.id));
      expect(keyUpdates.filter((id) => id === key.key.id)).toHaveLength(1);

      // After the interval the next use is written again.
      moveClock(31_000);
      const later = new Date();
      await as(t, key).get('/me').expect(200);
      await until(
        'the second use is written',
        () => keyUpdates.filter((id) => id === key.key.id).length === 2,
      );
      expect((await listed(user, key.key.id))?.lastUsedAt).toBe(later.toISOString());
      const me = await as(t, key).get('/me').expect(200);
      expect(me.body.key.lastUsedAt).toBe(later.toISOString());
    });
  });

  describe('rotation', () => {
    function rotate(owner: TestUser | TestApiKey, id: string, body: object): Test {
      return as(t, owner).post(`/api-keys/${id}/rotate`, body);
    }

    it('issues a new secret with the same rights; the old one works for the grace, then 401', async () => {
      const user = await createUser(t);
      const old = await createApiKey(t, user, {
        name: 'partner',
        branch: 'staging',
        expiresAt: '2099-01-01T00:00:00Z',
        ...LIMITS,
      });
      holdClock();
      const start = Date.now();

      const res = await rotate(user, old.key.id, { graceSeconds: 60 }).expect(200);
      const fresh = res.body as TestApiKey & { key: ListedKey; previousExpiresAt: string };
      expect(fresh.apiKey).not.toBe(old.apiKey);
      expect(fresh.key.id).not.toBe(old.key.id);
      expect(fresh.previousExpiresAt).toBe(new Date(start + 60_000).toISOString());
      const same = {
        name: 'partner',
        kind: 'root',
        branch: 'staging',
        expiresAt: '2099-01-01T00:00:00.000Z',
        ...LIMITS,
      };
      expect(fresh.key).toMatchObject(same);
      expect(await listed(user, fresh.key.id)).toMatchObject(same);
      expect(await listed(user, old.key.id)).toMatchObject({
        ...same,
        expiresAt: fresh.previousExpiresAt,
      });

      moveClock(59_000);
      await as(t, old).get('/me').expect(200);
      await as(t, fresh).get('/me').expect(200);
      moveClock(1_000);
      expectProblem(await as(t, old).get('/me').expect(401), 401, 'UNAUTHENTICATED');
      const me = await as(t, fresh).get('/me').expect(200);
      expect(me.body.key).toMatchObject({ id: fresh.key.id, ...LIMITS });
    });

    it('ends the old secret at once without a grace, and never extends an expiry', async () => {
      const user = await createUser(t);
      const old = await createApiKey(t, user, { name: 'leaked' });
      const fresh = (await rotate(user, old.key.id, {}).expect(200)).body as TestApiKey;
      expectProblem(await as(t, old).get('/me').expect(401), 401, 'UNAUTHENTICATED');
      await as(t, fresh).get('/me').expect(200);

      const soon = new Date(Date.now() + 30_000).toISOString();
      const short = await createApiKey(t, user, { expiresAt: soon });
      const res = await rotate(user, short.key.id, { graceSeconds: 86_400 }).expect(200);
      expect(res.body.previousExpiresAt).toBe(soon);
      expect(res.body.key.expiresAt).toBe(soon);
    });

    it('refuses a grace beyond a day, unknown keys, and a limited key rotating a wider one', async () => {
      const user = await createUser(t);
      const [main] = await listKeys(user);
      expectInvalid(
        await rotate(user, main?.id ?? '', { graceSeconds: 86_401 }).expect(400),
        'graceSeconds',
      );
      expectInvalid(
        await rotate(user, main?.id ?? '', { graceSeconds: -1 }).expect(400),
        'graceSeconds',
      );
      const other = await createUser(t);
      expectProblem(await rotate(other, main?.id ?? '', {}).expect(404), 404, 'API_KEY_NOT_FOUND');
      const limited = await createApiKey(t, user, { scopes: ['keys:manage'] });
      expectProblem(await rotate(limited, main?.id ?? '', {}).expect(403), 403, 'SCOPE_ESCALATION');
      // The main key still works: nothing was rotated.
      await as(t, user).get('/me').expect(200);
      expect(await listKeys(user)).toHaveLength(2);
    });

    it('rotates a team key for an admin member', async () => {
      const admin = await createUser(t);
      const team = await createTeam(t);
      await addTeamMember(t, team, admin, 'admin');
      const [teamKey] = (await as(t, admin).get(`/teams/${team.teamId}/api-keys`).expect(200))
        .body as ListedKey[];
      const res = await as(t, admin)
        .post(`/teams/${team.teamId}/api-keys/${teamKey?.id}/rotate`, { graceSeconds: 0 })
        .expect(200);
      expectProblem(await as(t, team).get('/me').expect(401), 401, 'UNAUTHENTICATED');
      const me = await as(t, res.body.apiKey as string)
        .get('/me')
        .expect(200);
      expect(me.body).toMatchObject({ kind: 'team', teamId: team.teamId });
    });
  });
});
