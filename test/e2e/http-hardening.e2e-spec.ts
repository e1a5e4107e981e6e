import { brotliCompressSync, deflateSync, gzipSync } from 'node:zlib';
import { createTestApp, TEST_ADMIN_KEY, type TestApp } from '../support/app';
import { createSubKey, createUser, type TestSubProfile, type TestUser } from '../support/factories';

const BODY_LIMIT = 64 * 1024;
const PROTOTYPE_NAMES = ['__proto__', 'constructor', 'prototype'] as const;

interface Res {
  status: number;
  headers: Record<string, string>;
  body: Record<string, unknown> & { errors?: { field: string; message: string }[] };
}

function expectProblem(res: Res, status: number, code: string): void {
  expect({ status: res.status, code: res.body.code }).toEqual({ status, code });
  expect(res.headers['content-type']).toMatch(/^application\/problem\+json/);
  expect(res.body.status).toBe(status);
  expect(res.body.traceId).toBe(res.headers['x-request-id']);
}

/** Every position a query key can take, with a value that is valid for that position. */
function prototypeKeys(name: string): [string, string][] {
  return [
    [name, '1'],
    [`filter[${name}]`, '1'],
    [`existsFilter[${name}]`, 'false'],
    [`before[${name}]`, '1'],
    [`after[${name}]`, '1'],
    [`a.${name}`, '1'],
    [`filter[a.${name}]`, '1'],
    [`${name}[x]`, '1'],
  ];
}

describe('HTTP hardening: query keys, content encodings, Cache-Control', () => {
  let t: TestApp;
  let user: TestUser;
  let sub: TestSubProfile;
  let projectId: string;
  let redId: string;
  let apiKeyId: string;

  beforeAll(async () => {
    t = await createTestApp(__filename, { BODY_LIMIT: String(BODY_LIMIT) });
    user = await createUser(t);
    sub = await createSubKey(t, user, { clientId: 'web', accountId: 'acct-hardening' });
    const post = async (path: string, body: object) =>
      (await t.http().post(path).set('X-Api-Key', user.apiKey).send(body).expect(200)).body;
    projectId = (await post('/project', { name: 'Apollo' })).id;
    await post('/project', { name: 'Gemini' });
    redId = (await post('/data/notes', { item: { color: 'red', n: 1 } }))._id;
    await post('/data/notes', { item: { color: 'blue', n: 2 } });
    await post('/data/notes', { item: { n: 3 } });
    // A spare key, so that no body route below could revoke the key the tests use.
    apiKeyId = (await post('/api-keys', { name: 'spare' })).key.id;
  });

  afterAll(async () => {
    await t.close();
  });

  describe('prototype-named query keys', () => {
    /** Every route that reads (or could read) a query string, with the key it needs and a valid base query. */
    function queryRoutes(): { path: string; key?: string; base?: string }[] {
      return [
        { path: '/data/notes', key: user.apiKey },
        { path: '/data/notes/count', key: user.apiKey },
        { path: `/data/notes/_id/${redId}`, key: user.apiKey },
        { path: '/data/notes/index', key: user.apiKey },
        { path: '/data', key: user.apiKey },
        { path: '/project', key: user.apiKey },
        { path: `/project/${projectId}`, key: user.apiKey },
        { path: '/profile', key: user.apiKey, base: `clientId=web&accountId=${sub.accountId}` },
        { path: '/profile', key: sub.apiKey },
        { path: `/profile/${sub.accountId}`, key: user.apiKey, base: 'clientId=web' },
        { path: '/api-keys', key: user.apiKey },
        { path: '/health' },
        { path: '/health/ready' },
        { path: '/docs-json' },
        { path: '/no/such/route', key: user.apiKey },
      ];
    }

    it.each(PROTOTYPE_NAMES)(
      'refuses %s in every query position on every route with 400 naming the key',
      async (name) => {
        const failures: string[] = [];
        for (const route of queryRoutes()) {
          for (const [key, value] of prototypeKeys(name)) {
            const query = `${route.base ? `${route.base}&` : ''}${key}=${value}`;
            let req = t.http().get(`${route.path}?${query}`);
            if (route.key) req = req.set('X-Api-Key', route.key);
            const res = (await req) as unknown as Res;
            const ok =
              res.status === 400 &&
              res.body.code === 'VALIDATION_FAILED' &&
              /^application\/problem\+json/.test(res.headers['content-type'] ?? '') &&
              JSON.stringify(res.body.errors?.map((e) => e.field)) === JSON.stringify([key]);
            if (!ok)
              failures.push(`${route.path}?${query} → ${res.status} ${String(res.body.code)}`);
          }
        }
        expect(failures).toEqual([]);
      },
    );

    it('refuses percent-encoded and +-encoded spellings of the same keys', async () => {
      for (const raw of [
        '%5F%5Fproto%5F%5F=1',
        'filter%5B__proto__%5D=1',
        'existsFilter%5B%5F%5Fproto%5F%5F%5D=false',
        'a%2Econstructor=1',
      ]) {
        const res = (await t
          .http()
          .get(`/data/notes?${raw}`)
          .set('X-Api-Key', user.apiKey)) as unknown as Res;
        expectProblem(res, 400, 'VALIDATION_FAILED');
        expect(res.body.errors?.[0]?.field).toBe(decodeURIComponent(raw.split('=')[0] as string));
      }
    });

    it('lists every offending key once, whatever else the query holds', async () => {
      const res = (await t
        .http()
        .get('/data/notes/count?color=red&__proto__=1&__proto__=2&filter[prototype]=x')
        .set('X-Api-Key', user.apiKey)) as unknown as Res;
      expectProblem(res, 400, 'VALIDATION_FAILED');
      expect(res.body.errors?.map((e) => e.field)).toEqual(['__proto__', 'filter[prototype]']);
    });

    it('refuses prototype keys even without an API key (before authentication)', async () => {
      const res = (await t.http().get('/project?filter[__proto__]=x')) as unknown as Res;
      expectProblem(res, 400, 'VALIDATION_FAILED');
    });

    it('refuses more query parameters than the parser keeps instead of dropping the rest', async () => {
      const padding = Array.from({ length: 1000 }, (_, i) => `p${i}=1`).join('&');
      await t.http().get(`/health?${padding}`).expect(200);
      const res = (await t.http().get(`/health?${padding}&__proto__=1`)) as unknown as Res;
      expectProblem(res, 400, 'INVALID_QUERY');
    });

    it('leaves normal filters, prototype-named values and the other query rules as they were', async () => {
      const auth = { 'X-Api-Key': user.apiKey };
      const red = await t.http().get('/data/notes?filter[color]=red').set(auth).expect(200);
      expect(red.body.map((i: { _id: string }) => i._id)).toEqual([redId]);
      const bare = await t.http().get('/data/notes/count?color=blue').set(auth).expect(200);
      expect(bare.body).toEqual({ count: 1 });
      const noColor = await t
        .http()
        .get('/data/notes?existsFilter[color]=false')
        .set(auth)
        .expect(200);
      expect(noColor.body.map((i: { n: number }) => i.n)).toEqual([3]);
      const all = await t.http().get('/data/notes/count').set(auth).expect(200);
      expect(all.body).toEqual({ count: 3 });
      await t.http().get(`/data/notes/_id/${redId}?color=red`).set(auth).expect(200);
      // A prototype name as a value is data, not a key: it simply matches nothing.
      await t.http().get('/data/notes?filter[color]=__proto__').set(auth).expect(204);

      const projects = await t.http().get('/project?filter[name]=Apollo').set(auth).expect(200);
      expect(projects.body.map((p: { name: string }) => p.name)).toEqual(['Apollo']);
      const unknown = (await t.http().get('/project?filter[owner]=x').set(auth)) as unknown as Res;
      expectProblem(unknown, 400, 'VALIDATION_FAILED');

      const target = await t
        .http()
        .get(`/profile?clientId=web&accountId=${sub.accountId}`)
        .set(auth)
        .expect(200);
      expect(target.body.accountId).toBe(sub.accountId);
      await t.http().get(`/profile/${sub.accountId}?clientId=web`).set(auth).expect(200);
    });
  });

  describe('compressed request bodies', () => {
    function bodyRoutes(): {
      method: 'post' | 'put' | 'delete';
      path: string;
      key: string;
    }[] {
      const root = user.apiKey;
      return [
        { method: 'post', path: '/project', key: root },
        { method: 'put', path: `/project/${projectId}`, key: root },
        { method: 'delete', path: `/project/${projectId}`, key: root },
        { method: 'post', path: '/profile', key: root },
        { method: 'put', path: '/profile', key: root },
        { method: 'put', path: '/profile/groups', key: root },
        { method: 'delete', path: '/profile/groups', key: root },
        { method: 'post', path: '/data/notes', key: root },
        { method: 'put', path: `/data/notes/_id/${redId}`, key: root },
        { method: 'delete', path: `/data/notes/_id/${redId}`, key: root },
        { method: 'post', path: '/data/notes/index', key: root },
        { method: 'delete', path: '/data/notes/index', key: root },
        { method: 'post', path: '/api-keys', key: root },
        { method: 'delete', path: `/api-keys/${apiKeyId}`, key: root },
        { method: 'post', path: '/admin/users', key: TEST_ADMIN_KEY },
        { method: 'post', path: '/admin/teams', key: TEST_ADMIN_KEY },
        { method: 'put', path: `/admin/users/${user.subject}/plans`, key: TEST_ADMIN_KEY },
      ];
    }

    const truncatedGzip = gzipSync(JSON.stringify({ name: 'truncated' })).subarray(0, 12);
    const corrupt: [string, Buffer][] = [
      ['gzip', Buffer.from('{}')],
      ['gzip', truncatedGzip],
      ['deflate', Buffer.from('{}')],
      ['br', Buffer.from('{}')],
      ['GZIP', Buffer.from('not gzip at all')],
    ];

    function send(
      method: 'post' | 'put' | 'delete',
      path: string,
      body: Buffer,
      headers: Record<string, string>,
    ) {
      return (
        t
          .http()
          [method](path)
          .set({ 'Content-Type': 'application/json', ...headers })
          // superagent would otherwise JSON-serialise the Buffer because of the content type.
          .serialize((raw: Buffer) => raw as unknown as string)
          .send(body)
      );
    }

    it.each([true, false])(
      'answers a corrupt gzip, deflate or br body with 400 on every body route (with a key: %p)',
      async (withKey) => {
        const failures: string[] = [];
        for (const route of bodyRoutes()) {
          for (const [encoding, body] of corrupt) {
            const res = (await send(route.method, route.path, body, {
              'Content-Encoding': encoding,
              ...(withKey ? { 'X-Api-Key': route.key } : {}),
            })) as unknown as Res;
            const ok =
              res.status === 400 &&
              res.body.code === 'INVALID_CONTENT_ENCODING' &&
              res.body.title === 'The request body could not be decoded' &&
              /^application\/problem\+json/.test(res.headers['content-type'] ?? '');
            if (!ok)
              failures.push(
                `${route.method.toUpperCase()} ${route.path} (${encoding}) → ${res.status} ${String(res.body.code)}`,
              );
          }
        }
        expect(failures).toEqual([]);
      },
    );

    it.each([
      ['gzip', gzipSync],
      ['deflate', deflateSync],
      ['br', brotliCompressSync],
    ] as const)('still accepts a valid %s body', async (encoding, compress) => {
      const name = `Zipped ${encoding}`;
      const res = await send('post', '/project', compress(JSON.stringify({ name })), {
        'Content-Encoding': encoding,
        'X-Api-Key': user.apiKey,
      }).expect(200);
      expect(res.body.name).toBe(name);
    });

    it.each(['compress', 'zstd', 'x-gzip', 'gzip, br', 'bogus'])(
      'answers Content-Encoding %p with 415',
      async (encoding) => {
        const res = (await send('post', '/project', Buffer.from('{"name":"x"}'), {
          'Content-Encoding': encoding,
          'X-Api-Key': user.apiKey,
        })) as unknown as Res;
        expectProblem(res, 415, 'UNSUPPORTED_CONTENT_ENCODING');
      },
    );

    it.each([
      ['gzip', gzipSync],
      ['deflate', deflateSync],
      ['br', brotliCompressSync],
    ] as const)(
      'answers a %s body that decompresses beyond BODY_LIMIT with 413',
      async (encoding, compress) => {
        const bomb = compress(JSON.stringify({ name: 'a'.repeat(BODY_LIMIT * 64) }));
        expect(bomb.length).toBeLessThan(BODY_LIMIT);
        const res = (await send('post', '/project', bomb, {
          'Content-Encoding': encoding,
          'X-Api-Key': user.apiKey,
        })) as unknown as Res;
        expectProblem(res, 413, 'PAYLOAD_TOO_LARGE');
      },
    );
  });

  describe('Cache-Control', () => {
    it('sends no-store on a success response of every module', async () => {
      const root = { 'X-Api-Key': user.apiKey };
      const responses = await Promise.all([
        t.http().get('/profile').set(root).expect(200),
        t.http().get('/project').set(root).expect(200),
        t.http().get(`/project/${projectId}`).set(root).expect(200),
        t.http().get('/data').set(root).expect(200),
        t.http().get('/data/notes/count').set(root).expect(200),
        t.http().get('/data/notes/index').set(root).expect(200),
        t.http().get('/api-keys').set(root).expect(200),
        t.http().post('/api-keys').set(root).send({ name: 'cache' }).expect(200),
        t
          .http()
          .post('/admin/teams')
          .set('X-Api-Key', TEST_ADMIN_KEY)
          .send({ name: 'c' })
          .expect(200),
        t.http().get('/health').expect(200),
        t.http().get('/health/ready').expect(200),
        t.http().get('/docs-json').expect(200),
      ]);
      for (const res of responses) {
        // The health endpoints add no-cache and must-revalidate of their own.
        const expected = res.request.url.includes('/health')
          ? /^(.+, )?no-store(, .+)?$/
          : /^no-store$/;
        expect({ url: res.request.url, cache: res.headers['cache-control'] }).toEqual({
          url: res.request.url,
          cache: expect.stringMatching(expected),
        });
      }
    });

    it('sends no-store on errors: 401, 404, 400, 413 and 415', async () => {
      const responses = await Promise.all([
        t.http().get('/project').expect(401),
        t.http().get('/profile').set('X-Api-Key', 'pds_wrong').expect(401),
        t.http().get('/no/such/route').expect(404),
        t.http().get('/project/000000000000000000000000').set('X-Api-Key', user.apiKey).expect(404),
        t.http().get('/data/notes?__proto__=1').set('X-Api-Key', user.apiKey).expect(400),
        t
          .http()
          .post('/project')
          .set('X-Api-Key', user.apiKey)
          .send({ name: 'x'.repeat(BODY_LIMIT + 1) })
          .expect(413),
        t
          .http()
          .post('/project')
          .set({ 'Content-Type': 'application/json', 'Content-Encoding': 'gzip' })
          .send('{}')
          .expect(400),
        t.http().post('/project').set('Content-Type', 'text/plain').send('x').expect(415),
      ]);
      for (const res of responses) {
        expect({ status: res.status, cache: res.headers['cache-control'] }).toEqual({
          status: res.status,
          cache: 'no-store',
        });
      }
    });

    it('leaves the Swagger UI page and its static assets cacheable', async () => {
      for (const path of ['/docs', '/docs/swagger-ui.css', '/docs/swagger-ui-init.js']) {
        const res = await t.http().get(path).expect(200);
        expect(res.headers['cache-control'] ?? '').not.toContain('no-store');
      }
    });
  });
});
