import { createTestApp, TEST_ADMIN_KEY, type TestApp } from '../support/app';
import { createUser } from '../support/factories';

describe('problem responses, limits and operations', () => {
  let t: TestApp;

  beforeAll(async () => {
    t = await createTestApp(__filename, { BODY_LIMIT: '2048' });
  });

  afterAll(async () => {
    await t.close();
  });

  function expectProblem(
    res: { headers: Record<string, string>; body: Record<string, unknown> },
    status: number,
    code: string,
  ): void {
    expect(res.headers['content-type']).toMatch(/^application\/problem\+json/);
    expect(res.body).toMatchObject({
      status,
      code,
      type: expect.stringMatching(/^urn:problem:/),
      title: expect.any(String),
    });
    expect(typeof res.body.detail).toBe('string');
    expect(res.body.traceId).toBe(res.headers['x-request-id']);
  }

  it('answers unknown routes with 404 problem+json', async () => {
    const res = await t.http().get('/no/such/route').expect(404);
    expectProblem(res, 404, 'ROUTE_NOT_FOUND');
    expect(res.body.instance).toBe('/no/such/route');
  });

  it('answers malformed JSON with 400', async () => {
    const res = await t
      .http()
      .post('/admin/teams')
      .set('X-Api-Key', TEST_ADMIN_KEY)
      .set('Content-Type', 'application/json')
      .send('{"name": ')
      .expect(400);
    expectProblem(res, 400, 'MALFORMED_JSON');
  });

  it('refuses prototype keys in any DTO body instead of silently dropping them', async () => {
    const res = await t
      .http()
      .post('/admin/teams')
      .set('X-Api-Key', TEST_ADMIN_KEY)
      .set('Content-Type', 'application/json')
      .send('{"name":"x","__proto__":{"polluted":1},"nested":{"constructor":{"a":1}}}')
      .expect(400);
    expectProblem(res, 400, 'VALIDATION_FAILED');
    expect(res.body.errors.map((e: { field: string }) => e.field).sort()).toEqual([
      '__proto__',
      'nested.constructor',
    ]);
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
  });

  it('answers a non-JSON content type with 415', async () => {
    const res = await t
      .http()
      .post('/admin/teams')
      .set('X-Api-Key', TEST_ADMIN_KEY)
      .set('Content-Type', 'text/plain')
      .send('name=x')
      .expect(415);
    expectProblem(res, 415, 'UNSUPPORTED_MEDIA_TYPE');
  });

  it('answers a body over BODY_LIMIT with 413', async () => {
    const res = await t
      .http()
      .post('/admin/teams')
      .set('X-Api-Key', TEST_ADMIN_KEY)
      .send({ name: 'x'.repeat(4096) })
      .expect(413);
    expectProblem(res, 413, 'PAYLOAD_TOO_LARGE');
    expect(res.body.detail).toContain('2048');
  });

  it('echoes a well-formed X-Request-Id and generates one otherwise', async () => {
    const echoed = await t.http().get('/health').set('X-Request-Id', 'req-123').expect(200);
    expect(echoed.headers['x-request-id']).toBe('req-123');
    const generated = await t
      .http()
      .get('/health')
      .set('X-Request-Id', 'bad id with spaces')
      .expect(200);
    expect(generated.headers['x-request-id']).toMatch(/^[0-9a-f-]{36}$/);
  });

  it('sends security headers', async () => {
    const res = await t.http().get('/health').expect(200);
    expect(res.headers['x-content-type-options']).toBe('nosniff');
    expect(res.headers['content-security-policy']).toBeDefined();
    expect(res.headers['x-powered-by']).toBeUndefined();
  });

  it('reports liveness and readiness without a key', async () => {
    await t.http().get('/health').expect(200);
    const ready = await t.http().get('/health/ready').expect(200);
    expect(ready.body.status).toBe('ok');
  });

  describe('with RATE_LIMIT_MAX=5', () => {
    let limitedApp: TestApp;

    beforeAll(async () => {
      limitedApp = await createTestApp(__filename, {
        RATE_LIMIT_MAX: '5',
        RATE_LIMIT_WINDOW_MS: '60000',
      });
    });

    afterAll(async () => {
      await limitedApp.close();
    });

    it('answers 429 with Retry-After per key, without affecting other keys', async () => {
      const alice = await createUser(limitedApp);
      const bob = await createUser(limitedApp);
      const statuses: number[] = [];
      for (let i = 0; i < 5; i += 1) {
        statuses.push(
          (await limitedApp.http().get('/api-keys').set('X-Api-Key', alice.apiKey)).status,
        );
      }
      expect(statuses).toEqual([200, 200, 200, 200, 200]);
      const limited = await limitedApp
        .http()
        .get('/api-keys')
        .set('X-Api-Key', alice.apiKey)
        .expect(429);
      expectProblem(limited, 429, 'RATE_LIMITED');
      expect(Number(limited.headers['retry-after'])).toBeGreaterThan(0);
      // The budget is per key across routes, not per key and route.
      await limitedApp.http().get('/profile').set('X-Api-Key', alice.apiKey).expect(429);
      await limitedApp.http().get('/api-keys').set('X-Api-Key', bob.apiKey).expect(200);
    });
  });
});
