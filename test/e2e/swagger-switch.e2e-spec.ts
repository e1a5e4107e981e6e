import { createTestApp, type TestApp } from '../support/app';

/** SWAGGER_ENABLED=false: a deployment that keeps its API description private. */
let t: TestApp;
beforeAll(async () => {
  t = await createTestApp(__filename, { SWAGGER_ENABLED: 'false' });
});
afterAll(async () => t.close());

it.each(['/docs', '/docs-json', '/docs-yaml'])(
  'answers %s with 404 ROUTE_NOT_FOUND',
  async (path) => {
    const res = await t.http().get(path).expect(404);
    expect(res.body.code).toBe('ROUTE_NOT_FOUND');
  },
);

it('still serves the API', async () => {
  await t.http().get('/health').expect(200);
});
