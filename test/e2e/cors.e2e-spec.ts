import { loadConfig } from '../../src/config';
import { createTestApp, type TestApp } from '../support/app';
import { createUser, type TestUser } from '../support/factories';

const ALLOWED = 'https://app.example.com';

function preflight(t: TestApp, origin: string, path = '/project') {
  return t
    .http()
    .options(path)
    .set('Origin', origin)
    .set('Access-Control-Request-Method', 'POST')
    .set('Access-Control-Request-Headers', 'x-api-key, content-type, x-branch');
}

function headerList(value: string | undefined): string[] {
  return (value ?? '').split(',').map((h) => h.trim().toLowerCase());
}

describe('CORS_ORIGINS with a list of origins', () => {
  let t: TestApp;
  let user: TestUser;

  beforeAll(async () => {
    t = await createTestApp(__filename, { CORS_ORIGINS: `${ALLOWED}, http://localhost:5173` });
    user = await createUser(t);
  });

  afterAll(async () => {
    await t.close();
  });

  it('answers a preflight from an allowed origin with 204 and the CORS headers, without a key', async () => {
    const res = await preflight(t, ALLOWED).expect(204);
    expect(res.headers['access-control-allow-origin']).toBe(ALLOWED);
    expect(headerList(res.headers['access-control-allow-methods'])).toEqual(
      expect.arrayContaining(['get', 'head', 'post', 'put', 'patch', 'delete']),
    );
    expect(headerList(res.headers['access-control-allow-headers'])).toEqual(
      expect.arrayContaining(
        [
          'X-Api-Key',
          'Authorization',
          'Content-Type',
          'X-Branch',
          'X-Team',
          'If-Match',
          'If-None-Match',
          'Idempotency-Key',
        ].map((h) => h.toLowerCase()),
      ),
    );
    expect(res.headers['access-control-max-age']).toBe('600');
    expect(res.headers.vary).toMatch(/Origin/);
  });

  it('lets a browser read the documented response headers of an allowed origin', async () => {
    const res = await t
      .http()
      .get('/project')
      .set('Origin', 'http://localhost:5173')
      .set('X-Api-Key', user.apiKey)
      .expect(200);
    expect(res.headers['access-control-allow-origin']).toBe('http://localhost:5173');
    expect(headerList(res.headers['access-control-expose-headers'])).toEqual(
      expect.arrayContaining(
        [
          'ETag',
          'Link',
          'X-Request-Id',
          'Retry-After',
          'X-RateLimit-Limit',
          'X-RateLimit-Remaining',
          'X-RateLimit-Reset',
          'X-Item-Created',
          'X-Items-Deleted',
          'Location',
          'Schema-Warnings',
        ].map((h) => h.toLowerCase()),
      ),
    );
  });

  it('adds CORS headers to error responses of an allowed origin too', async () => {
    const res = await t.http().get('/project').set('Origin', ALLOWED).expect(401);
    expect(res.headers['access-control-allow-origin']).toBe(ALLOWED);
  });

  it('gives another origin no CORS headers: its preflight meets the routes (405)', async () => {
    const res = await preflight(t, 'https://evil.example.com');
    expect(res.status).toBe(405);
    expect(res.headers['access-control-allow-origin']).toBeUndefined();
    const get = await t.http().get('/health').set('Origin', 'https://evil.example.com');
    expect(get.status).toBe(200);
    expect(get.headers['access-control-allow-origin']).toBeUndefined();
  });

  it('adds nothing to requests without an Origin', async () => {
    const res = await t.http().get('/health').expect(200);
    expect(res.headers['access-control-allow-origin']).toBeUndefined();
  });
});

describe('CORS_ORIGINS=*', () => {
  let t: TestApp;

  beforeAll(async () => {
    t = await createTestApp(__filename, { CORS_ORIGINS: '*' });
  });

  afterAll(async () => {
    await t.close();
  });

  it('allows any origin', async () => {
    const res = await preflight(t, 'https://anywhere.example.org').expect(204);
    expect(res.headers['access-control-allow-origin']).toBe('*');
  });
});

describe('CORS_ORIGINS unset', () => {
  let t: TestApp;

  beforeAll(async () => {
    t = await createTestApp(__filename);
  });

  afterAll(async () => {
    await t.close();
  });

  it('is off: a preflight gets 405 with Allow and no CORS headers', async () => {
    const res = await preflight(t, ALLOWED);
    expect(res.status).toBe(405);
    expect(res.headers.allow).toBe('GET, HEAD, POST');
    expect(res.headers['access-control-allow-origin']).toBeUndefined();
  });
});

describe('CORS_ORIGINS validation', () => {
  it.each(['app.example.com', 'https://app.example.com/', 'https://a.example.com,,', 'ftp://x'])(
    'refuses %j at boot',
    (value) => {
      expect(() => loadConfig({ NODE_ENV: 'test', CORS_ORIGINS: value })).toThrow(/CORS_ORIGINS/);
    },
  );

  it('reads a list and *', () => {
    expect(
      loadConfig({ CORS_ORIGINS: 'https://a.example.com, http://localhost:3001' }).corsOrigins,
    ).toEqual(['https://a.example.com', 'http://localhost:3001']);
    expect(loadConfig({ CORS_ORIGINS: '*' }).corsOrigins).toBe('*');
    expect(loadConfig({}).corsOrigins).toEqual([]);
  });
});
