import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Browser } from 'playwright-core';
import { RATE_LIMIT_COLLECTION } from '../../src/rate-limit/rate-limit-hits';
import { createTestApp, type TestApp } from '../support/app';
import { launchChromium } from '../support/console-browser';
import {
  addTeamMember,
  createSubKey,
  createTeam,
  createUser,
  type TestTeam,
  type TestUser,
} from '../support/factories';
import { as, asOperator } from '../support/http';
import { expectInvalid, expectProblem } from '../support/problems';
import { SseClient } from '../support/sse';
import { until } from '../support/until';

/** An origin CORS_ORIGINS allows (the operator's console, say): not a publishable key's. */
const CONSOLE_ORIGIN = 'https://console.example.com';
const SHOP = 'https://shop.example.com';

interface IssuedKey {
  apiKey: string;
  key: {
    id: string;
    kind: string;
    scopes: string[] | null;
    collections: Record<string, string> | null;
    allowedOrigins: string[] | null;
  };
}

/**
 * A collection's access rules, written on its registry entry as PUT /data/{c}/access stores them
 * (`rules.access = {text, changedAt}`): the tests set rules without depending on that route.
 */
async function setAccessRules(
  t: TestApp,
  owner: { apiKey: string },
  collection: string,
  rules: unknown,
): Promise<void> {
  await t
    .http()
    .put(`/data/${collection}/access`)
    .set('X-Api-Key', owner.apiKey)
    .send(rules as object)
    .expect(200);
}

describe('publishable keys', () => {
  let t: TestApp;
  let user: TestUser;
  let base: string;
  let port: number;

  async function mint(
    body: Record<string, unknown>,
    holder: { apiKey: string } = user,
  ): Promise<IssuedKey> {
    const res = await as(t, holder)
      .post('/api-keys', { kind: 'publishable', ...body })
      .expect(200);
    return res.body as IssuedKey;
  }

  beforeAll(async () => {
    t = await createTestApp(__filename, {
      CORS_ORIGINS: CONSOLE_ORIGIN,
      REGISTRY_CACHE_MS: '0',
      RATE_LIMIT_STORE: 'mongo',
      RATE_LIMIT_PUBLISHABLE_MAX: '4',
      TRUST_PROXY: 'true',
      API_KEY_MAX_ALLOWED_ORIGINS: '3',
      EVENTS_MAX_STREAMS_PER_PUBLISHABLE_KEY: '1',
    });
    await t.app.listen(0, '127.0.0.1');
    port = (t.app.getHttpServer().address() as AddressInfo).port;
    base = `http://127.0.0.1:${port}`;
    user = await createUser(t);
    for (const collection of ['catalogue', 'hidden', 'drafts'])
      await as(t, user)
        .post(`/data/${collection}`, { item: { title: collection } })
        .expect(200);
  });

  afterAll(async () => {
    await t.close();
  });

  describe('minting', () => {
    it('mints a read-only key for the named collections and origins, listed with its kind and origins', async () => {
      const issued = await mint({
        name: 'shop',
        collections: ['catalogue'],
        allowedOrigins: [SHOP, 'http://localhost:5173'],
      });
      expect(issued.apiKey).toMatch(/^pds_/);
      expect(issued.key).toMatchObject({
        kind: 'publishable',
        scopes: ['data:read', 'events:read'],
        collections: { catalogue: 'read' },
        allowedOrigins: [SHOP, 'http://localhost:5173'],
      });
      const listed = (await as(t, user).get('/api-keys').expect(200)).body as IssuedKey['key'][];
      expect(listed.find((k) => k.id === issued.key.id)).toMatchObject({
        kind: 'publishable',
        allowedOrigins: [SHOP, 'http://localhost:5173'],
      });
      // Other kinds list no origins.
      expect(listed.find((k) => k.kind === 'root')?.allowedOrigins).toBeNull();
    });

    it('requires at least one collection name and one origin, and names every wrong member', async () => {
      expectInvalid(
        await as(t, user).post('/api-keys', { kind: 'publishable' }),
        'collections',
        'allowedOrigins',
      );
      expectInvalid(
        await as(t, user).post('/api-keys', {
          kind: 'publishable',
          collections: [],
          allowedOrigins: [],
        }),
        'collections',
        'allowedOrigins',
      );
      expectInvalid(
        await as(t, user).post('/api-keys', {
          kind: 'publishable',
          collections: ['catalogue', 'notes*', '*'],
          allowedOrigins: [SHOP, 'https://shop.example.com/', 'https://shop.example.com/app'],
        }),
        'collections[1]',
        'collections[2]',
        'allowedOrigins[1]',
        'allowedOrigins[2]',
      );
      for (const origin of [
        '*',
        'https://*.example.com',
        'HTTPS://SHOP.EXAMPLE.COM',
        'https://shop.example.com:443',
        'ftp://shop.example.com',
        'https://user@shop.example.com',
        'null',
      ])
        expectInvalid(
          await as(t, user).post('/api-keys', {
            kind: 'publishable',
            collections: ['catalogue'],
            allowedOrigins: [origin],
          }),
          'allowedOrigins[0]',
        );
      // API_KEY_MAX_ALLOWED_ORIGINS is 3 here.
      expectInvalid(
        await as(t, user).post('/api-keys', {
          kind: 'publishable',
          collections: ['catalogue'],
          allowedOrigins: ['https://a.example', 'https://b.example', 'https://c.example', SHOP],
        }),
        'allowedOrigins',
      );
    });

    it('refuses the members of other kinds on a publishable key, and origins on other kinds', async () => {
      expectInvalid(
        await as(t, user).post('/api-keys', {
          kind: 'publishable',
          collections: ['catalogue'],
          allowedOrigins: [SHOP],
          scopes: ['data:write'],
          clientId: 'c',
          accountId: 'a',
        }),
        'scopes',
        'clientId',
        'accountId',
      );
      expectInvalid(
        await as(t, user).post('/api-keys', { allowedOrigins: [SHOP] }),
        'allowedOrigins',
      );
      expectInvalid(
        await as(t, user).post('/api-keys', { collections: ['catalogue'] }),
        'collections',
      );
    });

    it('is minted by root keys only: not by sub keys, nor by a publishable key', async () => {
      const sub = await createSubKey(t, user);
      const body = { kind: 'publishable', collections: ['catalogue'], allowedOrigins: [SHOP] };
      expectProblem(await as(t, sub).post('/api-keys', body), 403, 'FORBIDDEN');
      const publishable = await mint({ collections: ['catalogue'], allowedOrigins: [SHOP] });
      expectProblem(await as(t, publishable).post('/api-keys', body), 403, 'FORBIDDEN');
      expectProblem(await as(t, publishable).get('/api-keys'), 403, 'FORBIDDEN');
    });

    it('never reaches beyond the minting key: a key limited to other collections cannot mint one for catalogue', async () => {
      const limited = (
        await as(t, user)
          .post('/api-keys', {
            collections: { drafts: 'write' },
            scopes: ['keys:manage', 'data:write', 'events:read'],
          })
          .expect(200)
      ).body as IssuedKey;
      expectProblem(
        await as(t, limited).post('/api-keys', {
          kind: 'publishable',
          collections: ['catalogue'],
          allowedOrigins: [SHOP],
        }),
        403,
        'SCOPE_ESCALATION',
      );
    });

    it('rotates with its kind, collections and origins, and stops at once when revoked', async () => {
      const issued = await mint({ collections: ['catalogue'], allowedOrigins: [SHOP] });
      const rotated = await as(t, user).post(`/api-keys/${issued.key.id}/rotate`, {}).expect(200);
      expect(rotated.body.key).toMatchObject({
        kind: 'publishable',
        collections: { catalogue: 'read' },
        allowedOrigins: [SHOP],
        scopes: ['data:read', 'events:read'],
      });
      expectProblem(await as(t, issued).get('/data/catalogue'), 401, 'UNAUTHENTICATED');
      const fresh = { apiKey: rotated.body.apiKey as string };
      await as(t, fresh).get('/data/catalogue/count').expect(200);
      await as(t, user)
        .delete(`/api-keys/${rotated.body.key.id as string}`)
        .expect(204);
      expectProblem(await as(t, fresh).get('/data/catalogue'), 401, 'UNAUTHENTICATED');
    });
  });

  describe('what it may call', () => {
    let key: IssuedKey;

    beforeAll(async () => {
      key = await mint({ collections: ['catalogue', 'drafts'], allowedOrigins: [SHOP] });
    });

    it('is refused every write route (403), whatever the rules say, and writes nothing', async () => {
      // Rules that would let any caller do anything do not make the key a writer.
      await setAccessRules(t, user, 'catalogue', {
        sub: { read: 'all', create: 'all', update: 'all', delete: 'all' },
        public: { read: 'all' },
      });
      const created = await as(t, user)
        .post('/data/catalogue', { item: { title: 'kept' } })
        .expect(200);
      const id = created.body._id as string;
      const client = as(t, key);
      const attempts = [
        client.post('/data/catalogue', { item: { title: 'x' } }),
        client.put('/data/catalogue', { filter: {}, values: { title: 'x' } }),
        client.delete('/data/catalogue', { filter: {} }),
        client.put(`/data/catalogue/_id/${id}`, { values: { title: 'x' } }),
        client.delete(`/data/catalogue/_id/${id}`),
        t
          .http()
          .patch(`/data/catalogue/_id/${id}`)
          .set('X-Api-Key', key.apiKey)
          .send({ push: { tags: 'x' } }),
        client.post('/data/catalogue/bulk', { items: [{ title: 'x' }] }),
        client.put('/data/catalogue/schema', { schema: {} }),
        client.put('/data/catalogue/expiry', { field: '_createdAt', afterSeconds: 60 }),
        client.post('/data/catalogue/index', { field: 'title' }),
        client.post('/import', ''),
      ];
      for (const attempt of attempts) expectProblem(await attempt, 403, 'FORBIDDEN');
      const items = await as(t, user).get('/data/catalogue').expect(200);
      expect((items.body as { title: string }[]).map((i) => i.title).sort()).toEqual([
        'catalogue',
        'kept',
      ]);
    });

    it('reads nothing outside its routes: profiles, projects, files, /me, exports, webhooks', async () => {
      const client = as(t, key);
      for (const path of [
        '/me',
        '/profile',
        '/project',
        '/files',
        '/export',
        '/webhooks',
        '/data',
        '/data/catalogue/schema',
      ])
        expectProblem(await client.get(path), 403, 'FORBIDDEN');
    });

    it('reaches only the collections it names (403 COLLECTION_NOT_ALLOWED, existing or not)', async () => {
      expectProblem(await as(t, key).get('/data/hidden'), 403, 'COLLECTION_NOT_ALLOWED');
      expectProblem(await as(t, key).get('/data/nosuch'), 403, 'COLLECTION_NOT_ALLOWED');
      await as(t, key).get('/data/catalogue/count').expect(200);
    });
  });

  // These read through the collections' public.read rule: the read paths apply the access plan.
  describe('reads through public.read', () => {
    let key: IssuedKey;

    beforeAll(async () => {
      key = await mint({ collections: ['catalogue', 'drafts'], allowedOrigins: [SHOP] });
      await as(t, user)
        .post('/data/catalogue', { item: { title: 'shown', published: true, cost: 7 } })
        .expect(200);
      await as(t, user)
        .post('/data/catalogue', { item: { title: 'unlisted', published: false, cost: 9 } })
        .expect(200);
      await setAccessRules(t, user, 'catalogue', {
        public: { read: { filter: { published: true } } },
        protectedFields: { public: ['cost'] },
      });
      await setAccessRules(t, user, 'drafts', { public: { read: 'none' } });
    });

    it('lists only the items its rule matches, without the protected fields', async () => {
      const res = await as(t, key).get('/data/catalogue').expect(200);
      const items = res.body as Record<string, unknown>[];
      expect(items.map((i) => i.title)).toEqual(['shown']);
      expect(items[0]).not.toHaveProperty('cost');
    });

    it('answers an item outside its rule 404, as a missing one', async () => {
      const all = await as(t, user).get('/data/catalogue').expect(200);
      const unlisted = (all.body as { _id: string; title: string }[]).find(
        (i) => i.title === 'unlisted',
      );
      expectProblem(
        await as(t, key).get(`/data/catalogue/_id/${unlisted?._id ?? ''}`),
        404,
        'ITEM_NOT_FOUND',
      );
    });

    it('reads nothing of a collection whose public.read is none', async () => {
      // An empty list is 204, as for a collection without items.
      await as(t, key).get('/data/drafts').expect(204);
      const count = await as(t, key).get('/data/drafts/count').expect(200);
      expect(count.body.count).toBe(0);
    });
  });

  describe('CORS', () => {
    let key: IssuedKey;

    beforeAll(async () => {
      key = await mint({ collections: ['catalogue'], allowedOrigins: [SHOP] });
    });

    it('answers its own origin with that origin and Vary: Origin', async () => {
      const res = await as(t, key)
        .get('/data/catalogue/count', { headers: { Origin: SHOP } })
        .expect(200);
      expect(res.headers['access-control-allow-origin']).toBe(SHOP);
      expect(res.headers.vary).toMatch(/\bOrigin\b/i);
      expect(res.headers['access-control-expose-headers']).toMatch(/X-RateLimit-Remaining/);
    });

    it('refuses another origin 403 ORIGIN_NOT_ALLOWED without CORS headers, one CORS_ORIGINS allows too', async () => {
      for (const origin of ['https://evil.example', CONSOLE_ORIGIN]) {
        const res = await as(t, key).get('/data/catalogue', { headers: { Origin: origin } });
        expectProblem(res, 403, 'ORIGIN_NOT_ALLOWED');
        expect(res.headers['access-control-allow-origin']).toBeUndefined();
        expect(res.headers['access-control-expose-headers']).toBeUndefined();
      }
      // The console's origin keeps its CORS for the other keys.
      const root = await as(t, user)
        .get('/data/catalogue', { headers: { Origin: CONSOLE_ORIGIN } })
        .expect(200);
      expect(root.headers['access-control-allow-origin']).toBe(CONSOLE_ORIGIN);
    });

    it('gives another key sent from its origin no CORS headers: only a publishable key is readable there', async () => {
      const res = await as(t, user)
        .get('/data/catalogue', { headers: { Origin: SHOP } })
        .expect(200);
      expect(res.headers['access-control-allow-origin']).toBeUndefined();
    });

    it('lets a browser preflight send X-Api-Key to the routes it reads, from any origin, GET and HEAD only', async () => {
      for (const path of [
        '/data/catalogue',
        '/data/catalogue/_id/x',
        '/data/catalogue/count',
        '/events/stream',
      ]) {
        const res = await t
          .http()
          .options(path)
          .set('Origin', SHOP)
          .set('Access-Control-Request-Method', 'GET')
          .set('Access-Control-Request-Headers', 'x-api-key')
          .expect(204);
        expect(res.headers['access-control-allow-origin']).toBe(SHOP);
        expect(res.headers['access-control-allow-headers']).toMatch(/x-api-key/i);
        expect(res.headers['access-control-allow-methods']).not.toMatch(/POST|PUT|DELETE|PATCH/);
      }
      // A write, or a route it cannot call: the preflight meets the routes, without CORS headers.
      for (const [path, method] of [
        ['/data/catalogue', 'POST'],
        ['/profile', 'GET'],
        ['/api-keys', 'POST'],
      ] as const) {
        const res = await t
          .http()
          .options(path)
          .set('Origin', SHOP)
          .set('Access-Control-Request-Method', method)
          .set('Access-Control-Request-Headers', 'x-api-key');
        expect(res.headers['access-control-allow-origin']).toBeUndefined();
      }
    });
  });

  describe('limits', () => {
    it('has its own budget per key and client address, RATE_LIMIT_PUBLISHABLE_MAX, kept in the database', async () => {
      const key = await mint({ collections: ['catalogue'], allowedOrigins: [SHOP] });
      const from = (address: string) =>
        as(t, key).get('/data/catalogue/count', { headers: { 'X-Forwarded-For': address } });
      for (let i = 0; i < 4; i += 1) {
        const res = await from('203.0.113.10').expect(200);
        expect(res.headers['x-ratelimit-limit']).toBe('4');
      }
      expectProblem(await from('203.0.113.10'), 429, 'RATE_LIMITED');
      // Another visitor of the same site still has its budget.
      await from('203.0.113.11').expect(200);
      // The root key keeps RATE_LIMIT_MAX.
      const root = await as(t, user).get('/data/catalogue/count').expect(200);
      expect(Number(root.headers['x-ratelimit-limit'])).toBeGreaterThan(4);
      const hits = await t.connection
        .collection(RATE_LIMIT_COLLECTION)
        .countDocuments({ _id: { $regex: `key:${key.key.id}%7Cip:203\\.0\\.113\\.10` } } as never);
      expect(hits).toBe(4);
    });

    it('holds at most EVENTS_MAX_STREAMS_PER_PUBLISHABLE_KEY streams open', async () => {
      const key = await mint({ collections: ['catalogue'], allowedOrigins: [SHOP] });
      const headers = { 'X-Api-Key': key.apiKey };
      const first = await SseClient.open(port, '/events/stream', headers);
      expect(first.status).toBe(200);
      expectProblem(await as(t, key).get('/events/stream'), 429, 'TOO_MANY_STREAMS');
      // A root key is held to EVENTS_MAX_STREAMS_PER_KEY (10): its stream opens.
      const root = await SseClient.open(port, '/events/stream', { 'X-Api-Key': user.apiKey });
      expect(root.status).toBe(200);
      root.close();
      first.close();
      let second: SseClient | undefined;
      await until('the closed stream gives its slot back', async () => {
        second?.close();
        second = await SseClient.open(port, '/events/stream', headers);
        return second.status === 200;
      });
      second?.close();
    });
  });

  describe('minted by a team', () => {
    let team: TestTeam;
    let admin: TestUser;
    const keysOf = (teamId: string) => `/teams/${teamId}/api-keys`;

    async function mintForTeam(
      body: Record<string, unknown>,
      teamId: string = team.teamId,
    ): Promise<IssuedKey> {
      const res = await as(t, admin)
        .post(keysOf(teamId), { kind: 'publishable', ...body })
        .expect(200);
      return res.body as IssuedKey;
    }

    beforeAll(async () => {
      team = await createTeam(t);
      admin = await createUser(t);
      await addTeamMember(t, team, admin, 'admin');
      // The team's catalogue, read through its public.read rule …
      for (const item of [
        { title: 'team shown', published: true, cost: 3 },
        { title: 'team unlisted', published: false, cost: 4 },
      ])
        await as(t, team).post('/data/catalogue', { item }).expect(200);
      await setAccessRules(t, team, 'catalogue', {
        public: { read: { filter: { published: true } } },
        protectedFields: { public: ['cost'] },
      });
      // … and the admin's own catalogue, which a key of the team never reads.
      await as(t, admin)
        .post('/data/catalogue', { item: { title: 'admin own', published: true } })
        .expect(200);
      await setAccessRules(t, admin, 'catalogue', { public: { read: 'all' } });
    });

    it('is minted by an admin member, checked as for users, and listed with its kind and origins', async () => {
      const issued = await mintForTeam({
        name: 'team shop',
        collections: ['catalogue'],
        allowedOrigins: [SHOP],
      });
      expect(issued.key).toMatchObject({
        kind: 'publishable',
        scopes: ['data:read', 'events:read'],
        collections: { catalogue: 'read' },
        allowedOrigins: [SHOP],
      });
      const listed = (await as(t, admin).get(keysOf(team.teamId)).expect(200))
        .body as IssuedKey['key'][];
      expect(listed.find((k) => k.id === issued.key.id)).toMatchObject({
        kind: 'publishable',
        allowedOrigins: [SHOP],
      });
      // Not among the admin's own keys: it is the team's.
      const own = (await as(t, admin).get('/api-keys').expect(200)).body as IssuedKey['key'][];
      expect(own.map((k) => k.id)).not.toContain(issued.key.id);

      expectInvalid(
        await as(t, admin).post(keysOf(team.teamId), { kind: 'publishable' }),
        'collections',
        'allowedOrigins',
      );
      expectInvalid(
        await as(t, admin).post(keysOf(team.teamId), {
          kind: 'publishable',
          collections: ['notes*'],
          allowedOrigins: ['https://shop.example.com/app'],
          scopes: ['data:write'],
        }),
        'collections[0]',
        'allowedOrigins[0]',
        'scopes',
      );
      // Origins are for a publishable key only, on a team's route as on POST /api-keys.
      expectInvalid(
        await as(t, admin).post(keysOf(team.teamId), { allowedOrigins: [SHOP] }),
        'allowedOrigins',
      );
      // The team's route is the way: neither a team key nor a member acting for the team
      // (X-Team) calls POST /api-keys.
      const body = { kind: 'publishable', collections: ['catalogue'], allowedOrigins: [SHOP] };
      expectProblem(await as(t, team).post('/api-keys', body), 403, 'FORBIDDEN');
      expectProblem(
        await as(t, admin).post('/api-keys', body, { headers: { 'X-Team': team.teamId } }),
        403,
        'FORBIDDEN',
      );
    });

    it("reads the team's collection through its public.read rule, never the admin's own of the same name", async () => {
      const key = await mintForTeam({ collections: ['catalogue'], allowedOrigins: [SHOP] });
      const res = await as(t, key)
        .get('/data/catalogue', { headers: { Origin: SHOP } })
        .expect(200);
      expect(res.headers['access-control-allow-origin']).toBe(SHOP);
      const items = res.body as Record<string, unknown>[];
      expect(items.map((i) => i.title)).toEqual(['team shown']);
      expect(items[0]).not.toHaveProperty('cost');
      expectProblem(
        await as(t, key).post('/data/catalogue', { item: { title: 'x' } }),
        403,
        'FORBIDDEN',
      );
    });

    it('rotates with its kind, collections and origins, and stops at once when revoked', async () => {
      const issued = await mintForTeam({ collections: ['catalogue'], allowedOrigins: [SHOP] });
      const rotated = await as(t, admin)
        .post(`${keysOf(team.teamId)}/${issued.key.id}/rotate`, {})
        .expect(200);
      expect(rotated.body.key).toMatchObject({
        kind: 'publishable',
        collections: { catalogue: 'read' },
        allowedOrigins: [SHOP],
        scopes: ['data:read', 'events:read'],
      });
      expectProblem(await as(t, issued).get('/data/catalogue'), 401, 'UNAUTHENTICATED');
      const fresh = { apiKey: rotated.body.apiKey as string };
      const count = await as(t, fresh).get('/data/catalogue/count').expect(200);
      expect(count.body.count).toBe(1);
      await as(t, admin)
        .delete(`${keysOf(team.teamId)}/${rotated.body.key.id as string}`)
        .expect(204);
      expectProblem(await as(t, fresh).get('/data/catalogue'), 401, 'UNAUTHENTICATED');
      const listed = (await as(t, admin).get(keysOf(team.teamId)).expect(200))
        .body as IssuedKey['key'][];
      expect(listed.map((k) => k.id)).not.toContain(rotated.body.key.id);
    });

    it('goes with the team when the team is erased', async () => {
      const erased = await createTeam(t);
      await addTeamMember(t, erased, admin, 'admin');
      await as(t, erased)
        .post('/data/catalogue', { item: { title: 'erased' } })
        .expect(200);
      await setAccessRules(t, erased, 'catalogue', { public: { read: 'all' } });
      const key = await mintForTeam(
        { collections: ['catalogue'], allowedOrigins: [SHOP] },
        erased.teamId,
      );
      // Read once: the key is in this instance's key cache, which must forget it too.
      await as(t, key).get('/data/catalogue/count').expect(200);
      await asOperator(t).delete(`/admin/teams/${erased.teamId}`).expect(202);
      expectProblem(await as(t, key).get('/data/catalogue/count'), 401, 'UNAUTHENTICATED');
      const stored = await t.connection
        .collection('api_keys')
        .countDocuments({ teamId: erased.teamId });
      expect(stored).toBe(0);
    });
  });

  describe('in a browser', () => {
    let browser: Browser;
    const pages: Server[] = [];

    /** A page server of its own origin (http://127.0.0.1:<port>). */
    async function pageOrigin(): Promise<string> {
      const server = createServer((_req, res) => {
        res.writeHead(200, { 'Content-Type': 'text/html' });
        res.end('<!doctype html><title>shop</title><p>shop</p>');
      });
      pages.push(server);
      await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
      return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    }

    beforeAll(async () => {
      browser = await launchChromium();
    });

    afterAll(async () => {
      await browser.close();
      for (const server of pages) await new Promise((resolve) => server.close(resolve));
    });

    async function readFrom(origin: string, apiKey: string): Promise<unknown> {
      const page = await (await browser.newContext()).newPage();
      await page.goto(`${origin}/`);
      // A string, evaluated in the page: this project's test code is compiled without the DOM's types.
      return page.evaluate(`fetch(${JSON.stringify(`${base}/data/catalogue`)}, {
          headers: { 'X-Api-Key': ${JSON.stringify(apiKey)} },
        }).then(
          async (res) => ({ status: res.status, items: res.status === 200 ? await res.json() : [] }),
          (error) => ({ refused: String(error) }),
        )`);
    }

    let shop: string;
    let key: IssuedKey;

    beforeAll(async () => {
      shop = await pageOrigin();
      key = await mint({ collections: ['catalogue'], allowedOrigins: [shop] });
      await setAccessRules(t, user, 'catalogue', {
        public: { read: { filter: { published: true } } },
        protectedFields: { public: ['cost'] },
      });
    });

    it('reads a public collection with fetch from a page of an allowed origin', async () => {
      const read = (await readFrom(shop, key.apiKey)) as {
        status: number;
        items: Record<string, unknown>[];
      };
      expect(read.status).toBe(200);
      expect(read.items.map((i) => i.title)).toEqual(['shown']);
      expect(read.items[0]).not.toHaveProperty('cost');
    });

    it('is refused by CORS on a page of another origin: the page cannot read the answer', async () => {
      const elsewhere = await pageOrigin();
      const refused = (await readFrom(elsewhere, key.apiKey)) as { refused?: string };
      expect(refused.refused).toMatch(/Failed to fetch/);
      // The same key from its own origin gets through CORS (whatever the page may read).
      const allowed = (await readFrom(shop, key.apiKey)) as { refused?: string; status?: number };
      expect(allowed.refused).toBeUndefined();
      expect([200, 204]).toContain(allowed.status);
    });
  });
});
