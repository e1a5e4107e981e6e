import { createTestApp, type TestApp } from '../support/app';
import { createUser } from '../support/factories';
import { as } from '../support/http';
describe('scratch', () => {
  let t: TestApp;
  beforeAll(async () => { t = await createTestApp(__filename); });
  afterAll(async () => { await t?.close(); });
  it('x', async () => {
    const user = await createUser(t);
    const r = await as(t, user).post('/files/000000000000000000000000/links', { expiresInSeconds: 5 }).catch((e) => e);
    console.log(r.status, r.body ?? r.message);
    const r2 = await as(t, user).post('/files/abc/links', { expiresInSeconds: 0 }).catch((e) => e);
    console.log(r2.status, r2.body ?? r2.message);
    const r3 = await as(t, null).get('/file-links/abc').catch((e) => e);
    console.log(r3.status, r3.body ?? r3.message);
  });
});
