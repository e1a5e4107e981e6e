import { BSON } from 'mongodb';
import { randomBytes } from 'node:crypto';
import type { Test } from 'supertest';
import { SCOPES, type Scope } from '../../src/auth/access-grant';
import { digestApiKey } from '../../src/auth/api-key.secret';
import { RATE_LIMIT_COLLECTION } from '../../src/rate-limit/rate-limit-hits';
import { createTestApp, everyDatabase, type TestApp } from '../support/app';
import { servedRoutes } from '../support/served-routes';
import { addTeamMember, createTeam, createUser, type TestUser } from '../support/factories';
import { as } from '../support/http';
import { expectProblem } from '../support/problems';
import { until } from '../support/until';

/**
 * The scope each route needs, as docs/keys.md, "Authentication" tables them; null: none (public
 * routes, GET /me, and the operator's routes, which refuse every other key by its kind).
 */
const SCOPE_OF: Record<string, Scope | null> = {
  'DELETE /admin/plans/{planName}': null,
  'GET /admin/plans': null,
  'GET /admin/plans/{planName}': null,
  'PUT /admin/plans/{planName}': null,
  'PUT /admin/teams/{id}/plans': null,
  'DELETE /admin/teams/{id}': null,
  'DELETE /admin/teams/{id}/members/{subject}': null,
  'DELETE /admin/users/{subject}': null,
  'GET /admin/clusters': null,
  'GET /admin/erasures': null,
  'GET /admin/erasures/{id}': null,
  'GET /admin/moves': null,
  'GET /admin/moves/{id}': null,
  'GET /admin/teams': null,
  'GET /admin/teams/{id}': null,
  'GET /admin/tenants/{kind}/{id}/placement': null,
  'GET /admin/usage': null,
  'GET /admin/users': null,
  'GET /admin/users/{subject}': null,
  'GET /admin/users/{subject}/export': null,
  'POST /admin/teams': null,
  'POST /admin/tenants/{kind}/{id}/move': null,
  'POST /admin/users': null,
  'PUT /admin/teams/{id}/members/{subject}': null,
  'PUT /admin/users/{subject}/identities': null,
  'PUT /admin/users/{subject}/plans': null,
  'GET /health': null,
  'GET /health/ready': null,
  'GET /file-links/{token}': null,
  'GET /me': null,
  'GET /me/branches': 'data:read',
  'GET /me/export': 'export',
  'GET /me/usage': 'usage:read',
  'DELETE /api-keys/{id}': 'keys:manage',
  'GET /api-keys': 'keys:manage',
  'POST /api-keys': 'keys:manage',
  'POST /api-keys/{id}/rotate': 'keys:manage',
  'GET /teams': 'profile:read',
  'GET /teams/{id}/api-keys': 'keys:manage',
  'POST /teams/{id}/api-keys': 'keys:manage',
  'DELETE /teams/{id}/api-keys/{keyId}': 'keys:manage',
  'POST /teams/{id}/api-keys/{keyId}/rotate': 'keys:manage',
  'GET /profile': 'profile:read',
  'GET /profile/{accountId}': 'profile:read',
  'GET /profiles': 'profile:read',
  'POST /profile': 'profile:write',
  'PUT /profile': 'profile:write',
  'DELETE /profile': 'profile:write',
  'PUT /profile/groups': 'profile:write',
  'DELETE /profile/groups': 'profile:write',
  'DELETE /profile/{accountId}': 'profile:write',
  'GET /project': 'projects:read',
  'GET /project/{projectId}': 'projects:read',
  'POST /project': 'projects:write',
  'PUT /project/{projectId}': 'projects:write',
  'DELETE /project/{projectId}': 'projects:write',
  'GET /data': 'data:read',
  'GET /data/openapi.json': 'data:read',
  'GET /data/{collection}': 'data:read',
  'GET /data/{collection}/count': 'data:read',
  'GET /data/{collection}/aggregate': 'data:read',
  'GET /data/{collection}/explain': 'data:read',
  'GET /data/{collection}/index': 'data:read',
  'GET /data/{collection}/stats': 'data:read',
  'GET /data/{collection}/schema': 'data:read',
  'GET /data/{collection}/schema-violations': 'data:read',
  'GET /data/{collection}/expiry': 'data:read',
  'GET /data/{collection}/access': 'data:read',
  'GET /data/{collection}/search': 'data:read',
  'GET /data/{collection}/{indexName}/{indexValue}': 'data:read',
  'POST /data/{collection}': 'data:write',
  'PUT /data/{collection}': 'data:write',
  'DELETE /data/{collection}': 'data:write',
  'POST /data/{collection}/bulk': 'data:write',
  'POST /data/{collection}/index': 'data:write',
  'DELETE /data/{collection}/index': 'data:write',
  'PUT /data/{collection}/schema': 'data:write',
  'DELETE /data/{collection}/schema': 'data:write',
  'PUT /data/{collection}/expiry': 'data:write',
  'DELETE /data/{collection}/expiry': 'data:write',
  'PUT /data/{collection}/access': 'data:write',
  'DELETE /data/{collection}/access': 'data:write',
  'PUT /data/{collection}/search': 'data:write',
  'DELETE /data/{collection}/search': 'data:write',
  'PUT /data/{collection}/{indexName}/{indexValue}': 'data:write',
  'PATCH /data/{collection}/{indexName}/{indexValue}': 'data:write',
  'DELETE /data/{collection}/{indexName}/{indexValue}': 'data:write',
  'GET /files': 'files:read',
  'GET /files/{id}': 'files:read',
  'GET /files/{id}/content': 'files:read',
  'POST /files': 'files:write',
  'DELETE /files/{id}': 'files:write',
  'POST /files/{id}/links': 'files:write',
  'GET /events': 'events:read',
  'GET /events/stream': 'events:read',
  'GET /webhooks': 'events:read',
  'POST /webhooks': 'events:read',
  'DELETE /webhooks/{id}': 'events:read',
  'GET /webhooks/{id}/deliveries': 'events:read',
  'GET /export': 'export',
  'POST /import': 'import',
};

/** A concrete URL of a route: any value fits each parameter, the guard decides before them. */
function urlOf(route: string): string {
  const path = route.slice(route.indexOf(' ') + 1);
  return path.replace(/\{([A-Za-z]+)\}/g, (_, name: string) =>
    name === 'collection' ? 'notes' : name === 'kind' ? 'user' : '0123456789abcdef01234567',
  );
}

function send(t: TestApp, route: string, key: string, headers: Record<string, string> = {}): Test {
  const method = route.slice(0, route.indexOf(' ')).toLowerCase() as
    'get' | 'post' | 'put' | 'patch' | 'delete';
  return t.http()[method](urlOf(route)).set('X-Api-Key', key).set(headers);
}

/** A root key of `user` holding only `scopes`, stored as a key made with them is. */
async function limitedKey(t: TestApp, user: TestUser, scopes: readonly Scope[]): Promise<string> {
  const secret = `pds_${randomBytes(32).toString('base64url')}`;
  await t.connection.collection('api_keys').insertOne({
    digest: digestApiKey(secret),
    prefix: secret.slice(0, 12),
    name: `holds ${scopes.length} scopes`,
    kind: 'root',
    subject: user.subject,
    teamId: '',
    clientId: '',
    accountId: '',
    profileId: '',
    branch: null,
    expiresAt: null,
    scopes: [...scopes],
    collections: null,
    allowedIps: null,
    createdAt: new Date(),
  });
  return secret;
}

/** `scope` and the scope that implies it (`data:write` implies `data:read`): what a key lacks. */
function withImplying(scope: Scope): Scope[] {
  const write = scope.endsWith(':read') ? scope.replace(/:read$/, ':write') : null;
  return [scope, ...SCOPES.filter((other) => other === write)];
}

/**
 * Every document of every database the app wrote, as canonical extended JSON, by database and
 * collection; `skip` names collections left out.
 */
async function dump(t: TestApp, skip: ReadonlySet<string>): Promise<Record<string, string[]>> {
  const out: Record<string, string[]> = {};
  for (const db of await everyDatabase(t)) {
    for (const { name } of await db.listCollections({}, { nameOnly: true }).toArray()) {
      if (skip.has(name)) continue;
      const docs = await db.collection(name).find().sort({ _id: 1 }).toArray();
      out[`${db.databaseName}.${name}`] = docs.map((doc) =>
        BSON.EJSON.stringify(doc, { relaxed: false }),
      );
    }
  }
  return out;
}

describe('scopes', () => {
  let t: TestApp;
  let user: TestUser;

  beforeAll(async () => {
    t = await createTestApp(__filename);
    user = await createUser(t);
  });

  afterAll(async () => {
    await t.close();
  });

  it('are declared for every route the router serves, as the document publishes them', async () => {
    expect(servedRoutes(t)).toEqual(Object.keys(SCOPE_OF).sort());
    const document = (await t.http().get('/docs-json').expect(200)).body as {
      paths: Record<string, Record<string, Record<string, unknown>>>;
    };
    const published = Object.fromEntries(
      Object.entries(document.paths).flatMap(([path, item]) =>
        Object.entries(item).map(([method, operation]) => [
          `${method.toUpperCase()} ${path}`,
          (operation['x-required-scope'] as Scope | undefined) ?? null,
        ]),
      ),
    );
    expect(published).toEqual(SCOPE_OF);
  });

  it.each(SCOPES.map((scope) => [scope]))(
    'a key without %s is refused on exactly the routes that need it',
    async (missing) => {
      const lacks = withImplying(missing);
      const key = await limitedKey(
        t,
        user,
        SCOPES.filter((scope) => !lacks.includes(scope)),
      );
      // An invalid X-Branch: the guard refuses it after the scope check, so a route that lets
      // the key through answers 400 INVALID_BRANCH and runs nothing (public routes ignore it).
      const answers = await Promise.all(
        Object.keys(SCOPE_OF).map(async (route) => ({
          route,
          res: await send(t, route, key, { 'X-Branch': 'Not A Branch' }),
        })),
      );
      const refused = answers
        .filter(({ res }) => (res.body as { code?: unknown }).code === 'INSUFFICIENT_SCOPE')
        .map(({ route }) => route);
      const needing = Object.keys(SCOPE_OF).filter((route) => {
        const scope = SCOPE_OF[route];
        return scope !== null && scope !== undefined && lacks.includes(scope);
      });
      expect(refused.sort()).toEqual(needing.sort());
      expect(needing.length).toBeGreaterThan(0);
      for (const { route, res } of answers) {
        if (needing.includes(route)) {
          expectProblem(res, 403, 'INSUFFICIENT_SCOPE');
          expect(res.headers['www-authenticate']).toBe(
            `Bearer error="insufficient_scope", scope="${SCOPE_OF[route]}"`,
          );
        } else if (SCOPE_OF[route] !== null || route === 'GET /me') {
          // Past the scope check: the guard's next refusal.
          expect([route, res.body.code]).toEqual([route, 'INVALID_BRANCH']);
          expect(res.headers['www-authenticate']).toBeUndefined();
        }
      }
    },
  );

  it('a data:read key leaves every database byte-identical through every write route', async () => {
    const full = user.apiKey;
    // What a full key could write to: an item, an index, a schema, an expiry, a project, a
    // webhook, a file, a sub profile and a key.
    await as(t, full)
      .post('/data/notes', { item: { _id: 'n1', text: 'kept' } })
      .expect(200);
    await as(t, full).post('/project', { name: 'kept' }).expect(200);
    const reader = await limitedKey(t, user, ['data:read']);
    // The key's first use, before the dump: anything the service records of a key's use (its
    // cache, its last use) is recorded by then.
    await as(t, reader).get('/data/notes').expect(200);
    // The writes above settle: their change-feed intents are deleted once their events are out.
    const intents = t.connection.collection('event_intents');
    await until('the writes’ intents deleted', async () => (await intents.countDocuments()) === 0);
    // The rate limit counts every request by its key, refused or not.
    const skip = new Set([RATE_LIMIT_COLLECTION]);
    const before = await dump(t, skip);
    expect(Object.keys(before).length).toBeGreaterThan(3);
    const bodies: Record<string, unknown> = {
      'POST /data/{collection}': { item: { _id: 'n2', text: 'new' } },
      'PUT /data/{collection}': { filter: {}, update: { text: 'changed' } },
      'POST /data/{collection}/bulk': { items: [{ text: 'bulk' }] },
      'POST /data/{collection}/index': { field: 'text' },
      'PUT /data/{collection}/schema': { schema: { type: 'object' }, action: 'error' },
      'PUT /data/{collection}/expiry': { field: '_createdAt', afterSeconds: 60 },
      'PUT /data/{collection}/access': { sub: { read: 'all' } },
      'PUT /data/{collection}/{indexName}/{indexValue}': { text: 'changed' },
      'PATCH /data/{collection}/{indexName}/{indexValue}': { push: { tags: 'x' } },
      'POST /project': { name: 'new' },
      'PUT /profile': { settings: { theme: 'dark' } },
      'POST /profile': { clientId: 'c', accountId: 'a1' },
      'PUT /profile/groups': { group: 'g' },
      'POST /api-keys': { name: 'more' },
      'POST /webhooks': { url: 'https://example.com/hook', events: ['item.created'] },
      'POST /import': undefined,
    };
    const writes = Object.keys(SCOPE_OF).filter((route) => !route.startsWith('GET '));
    expect(writes.length).toBeGreaterThan(30);
    const answers: [string, number, unknown][] = [];
    for (const route of writes) {
      const req = send(t, route.replace('{indexName}/{indexValue}', '_id/n1'), reader);
      const res = await (bodies[route] === undefined ? req : req.send(bodies[route] as object));
      answers.push([route, res.status, (res.body as { code?: unknown }).code]);
    }
    expect(await dump(t, skip)).toEqual(before);
    // The operator's routes refuse a root key by its kind first.
    expect(answers).toEqual(
      writes.map((route) => [
        route,
        403,
        route.includes(' /admin/') ? 'FORBIDDEN' : 'INSUFFICIENT_SCOPE',
      ]),
    );
  });

  it('holds a root key acting for a team (X-Team) to its own scopes', async () => {
    const team = await createTeam(t);
    await addTeamMember(t, team, user);
    const reader = await limitedKey(t, user, ['projects:read']);
    const headers = { 'X-Team': team.teamId };
    await as(t, reader).get('/project', { headers }).expect(200);
    const res = await as(t, reader).post('/project', { name: 'team plan' }, { headers });
    expectProblem(res, 403, 'INSUFFICIENT_SCOPE');
    expect(res.headers['www-authenticate']).toBe(
      'Bearer error="insufficient_scope", scope="projects:write"',
    );
    // The team's own key, made without scopes, holds them all.
    await as(t, team).post('/project', { name: 'team plan' }).expect(200);
  });

  it('gives the feed to events:read and the data in it only to the read scope of what it is about', async () => {
    const collection = `feed_${randomBytes(4).toString('hex')}`;
    let start = '0';
    for (;;) {
      const read = (await as(t, user).get(`/events?after=${start}&limit=500`).expect(200)).body;
      if (read.events.length === 0) break;
      start = read.next as string;
    }
    await as(t, user)
      .post(`/data/${collection}`, { item: { _id: 'secret', text: 'cost 12.40' } })
      .expect(200);
    await as(t, user)
      .put('/profile', { settings: { theme: 'dark' } })
      .expect(200);
    const watcher = await limitedKey(t, user, ['events:read']);
    const page = (await as(t, watcher).get(`/events?after=${start}&limit=500`).expect(200))
      .body as { events: { resource: string; key: string; data?: unknown }[] };
    const item = page.events.find((e) => e.resource === 'item' && e.key === 'secret');
    expect(item).toBeDefined();
    expect(item).not.toHaveProperty('data');
    for (const event of page.events) expect(event).not.toHaveProperty('data');
    expect(JSON.stringify(page)).not.toContain('12.40');
    // With data:read the same feed carries the items, and still not the profile's data.
    const reader = await limitedKey(t, user, ['events:read', 'data:read']);
    const full = (await as(t, reader).get(`/events?after=${start}&limit=500`).expect(200)).body as {
      events: { resource: string; key: string; data?: unknown }[];
    };
    expect(full.events.find((e) => e.key === 'secret')?.data).toMatchObject({ text: 'cost 12.40' });
    const profileEvents = full.events.filter((e) => e.resource === 'profile');
    expect(profileEvents.length).toBeGreaterThan(0);
    for (const event of profileEvents) expect(event).not.toHaveProperty('data');
    // The user's key, which holds every scope, sees the profile's data in the same events.
    const own = (await as(t, user).get(`/events?after=${start}&limit=500`).expect(200)).body as {
      events: { resource: string; data?: unknown }[];
    };
    expect(own.events.filter((e) => e.resource === 'profile').map((e) => e.data)).toEqual(
      profileEvents.map(() => expect.anything()),
    );
    // A live query answers with items, and a webhook delivers data: both need its read scopes.
    const live = await as(t, watcher).get(`/events?collection=${collection}&filter[text]=x`);
    expectProblem(live, 403, 'INSUFFICIENT_SCOPE');
    expect(live.headers['www-authenticate']).toBe(
      'Bearer error="insufficient_scope", scope="data:read"',
    );
    const hook = { url: 'https://hooks.example.com/in', events: ['created'] };
    const refused = await as(t, watcher).post('/webhooks', { ...hook, collection });
    expectProblem(refused, 403, 'INSUFFICIENT_SCOPE');
    expect(refused.headers['www-authenticate']).toBe(
      'Bearer error="insufficient_scope", scope="data:read"',
    );
    expectProblem(await as(t, reader).post('/webhooks', hook), 403, 'INSUFFICIENT_SCOPE');
  });

  it('refuses a read-only key the replay of an idempotent write made with a full key', async () => {
    const headers = { 'Idempotency-Key': `replay-${randomBytes(4).toString('hex')}` };
    const body = { item: { _id: 'once', text: 'first' } };
    await as(t, user).post('/data/replayed', body, { headers }).expect(200);
    const reader = await limitedKey(t, user, ['data:read']);
    const replay = await as(t, reader).post('/data/replayed', body, { headers });
    expectProblem(replay, 403, 'INSUFFICIENT_SCOPE');
    expect(replay.headers['idempotent-replayed']).toBeUndefined();
    // The full key still gets its replay: the refusal consumed nothing.
    const again = await as(t, user).post('/data/replayed', body, { headers }).expect(200);
    expect(again.headers['idempotent-replayed']).toBe('true');
  });
});
