import { createRemoteJWKSet, decodeProtectedHeader, jwtVerify } from 'jose';
import { SCOPES } from '../../src/auth/access-grant';
import { createTestApp, TEST_ADMIN_KEY, type TestApp } from '../support/app';
import { OidcProviderProcess } from '../support/oidc-provider';
import { expectProblem } from '../support/problems';

/**
 * A real OpenID Provider (oidc-provider) in front of the service: tokens come through its
 * discovery document, the authorization code flow with PKCE (login and consent posted over HTTP)
 * and client credentials. The service knows the provider only through OIDC_ISSUERS.
 */
const RESOURCE = 'https://profile-data.example.test/';
const APP = 'notes-spa';
const BACKEND = 'reporting-backend';

let provider: OidcProviderProcess;
let t: TestApp;

beforeAll(async () => {
  provider = await OidcProviderProcess.start({
    resource: RESOURCE,
    resourceScopes: [...SCOPES],
    publicClient: { id: APP, redirectUri: 'http://127.0.0.1:9/callback' },
    confidentialClient: { id: BACKEND, secret: 'reporting-backend-secret-0123456789' },
  });
  t = await createTestApp(__filename, {
    OIDC_ISSUERS: JSON.stringify([
      {
        issuer: provider.issuer,
        // The app's client id too: its ID tokens then pass the audience check, and must be
        // refused for what they are.
        audience: [RESOURCE, APP],
        rootClients: [APP],
        provision: true,
      },
    ]),
  });
});
afterAll(async () => {
  await t?.close();
  await provider?.stop();
});

const bearer = (token: string) => ({ Authorization: `Bearer ${token}` });

describe('the provider', () => {
  it('issues an RFC 9068 access token for the resource through the code flow with PKCE', async () => {
    const tokens = await provider.signIn('ada', 'openid email data:read data:write');
    const { jwks_uri, issuer } = await provider.discovery();
    expect(issuer).toBe(provider.issuer);
    const { payload, protectedHeader } = await jwtVerify(
      tokens.access_token,
      createRemoteJWKSet(new URL(jwks_uri)),
      { issuer: provider.issuer, audience: RESOURCE, typ: 'at+jwt' },
    );
    expect(protectedHeader.alg).toBe('RS256');
    expect(payload).toMatchObject({
      sub: 'ada',
      client_id: APP,
      email: 'ada@example.test',
    });
    expect(String(payload.scope).split(' ').sort()).toEqual(['data:read', 'data:write']);
  });

  it('issues a client credentials token whose subject is the client itself', async () => {
    const tokens = await provider.clientCredentials('data:read');
    const { jwks_uri } = await provider.discovery();
    const { payload } = await jwtVerify(
      tokens.access_token,
      createRemoteJWKSet(new URL(jwks_uri)),
      {
        issuer: provider.issuer,
        audience: RESOURCE,
        typ: 'at+jwt',
      },
    );
    expect(payload).toMatchObject({ sub: BACKEND, client_id: BACKEND, scope: 'data:read' });
    expect(payload.email).toBeUndefined();
  });

  it('issues an ID token for the app beside the access token, typed as no access token', async () => {
    const tokens = await provider.signIn('ada', 'openid email data:read');
    expect(tokens.id_token).toEqual(expect.any(String));
    const { jwks_uri } = await provider.discovery();
    const { payload } = await jwtVerify(tokens.id_token!, createRemoteJWKSet(new URL(jwks_uri)), {
      issuer: provider.issuer,
      audience: APP,
    });
    expect(payload.sub).toBe('ada');
    expect(decodeProtectedHeader(tokens.id_token!).typ).not.toBe('at+jwt');
  });
});

describe('the service with the provider as its issuer', () => {
  it("acts as the signed-in user's root profile, provisioned by the first token", async () => {
    const { access_token } = await provider.signIn('grace', 'openid email data:read data:write');
    const res = await t.http().get('/me').set(bearer(access_token)).expect(200);
    expect(res.body).toMatchObject({
      kind: 'root',
      authenticatedWith: { kind: 'token', issuer: provider.issuer, tokenSubject: 'grace' },
      key: null,
    });
    expect([...res.body.scopes].sort()).toEqual(['data:read', 'data:write']);
    // The provisioned user carries the token's email.
    const user = await t
      .http()
      .get(`/admin/users/${encodeURIComponent(res.body.subject)}`)
      .set('X-Api-Key', TEST_ADMIN_KEY)
      .expect(200);
    expect(user.body.profile).toMatchObject({ email: 'grace@example.test' });
  });

  it("writes and reads the user's data with the token", async () => {
    const { access_token } = await provider.signIn('lin', 'openid data:read data:write');
    const made = await t
      .http()
      .post('/data/notes')
      .set(bearer(access_token))
      .send({ item: { text: 'from a token' } })
      .expect(200);
    const read = await t
      .http()
      .get(`/data/notes/_id/${made.body._id}`)
      .set(bearer(access_token))
      .expect(200);
    expect(read.body).toMatchObject({ _id: made.body._id, text: 'from a token' });
  });

  it('acts as a sub profile for a client credentials token of a client not in rootClients', async () => {
    const user = await provider.signIn('mae', 'openid data:read data:write');
    const made = await t
      .http()
      .post('/data/notes')
      .set(bearer(user.access_token))
      .send({ item: { text: "mae's" } })
      .expect(200);
    const { access_token } = await provider.clientCredentials('data:read data:write');
    const res = await t.http().get('/me').set(bearer(access_token)).expect(200);
    // No user signed in: the identity is (issuer, the client), its own root, acted on as the
    // sub profile (that root, the client) whose accountId is the token's sub.
    expect(res.body).toMatchObject({
      kind: 'sub',
      clientId: BACKEND,
      accountId: BACKEND,
      authenticatedWith: { kind: 'token', issuer: provider.issuer, tokenSubject: BACKEND },
    });
    const mae = await t.http().get('/me').set(bearer(user.access_token)).expect(200);
    expect(res.body.subject).not.toBe(mae.body.subject);
    // Another tenant: the user's item (and collection) are not there.
    const read = await t.http().get(`/data/notes/_id/${made.body._id}`).set(bearer(access_token));
    expect(read.status).toBe(404);
  });

  it("limits the routes to the token's scopes: 403 INSUFFICIENT_SCOPE on a write without data:write", async () => {
    const { access_token } = await provider.signIn('noor', 'openid data:read');
    // Reads are within data:read; the write is not.
    await t.http().get('/data').set(bearer(access_token)).expect(200);
    const res = await t
      .http()
      .post('/data/notes')
      .set(bearer(access_token))
      .send({ item: { text: 'no' } });
    expectProblem(res, 403, 'INSUFFICIENT_SCOPE');
    expect(res.headers['www-authenticate']).toBe(
      'Bearer error="insufficient_scope", scope="data:write"',
    );
  });

  it('refuses the ID token of the same flow: 401 INVALID_TOKEN', async () => {
    const { id_token } = await provider.signIn('ada', 'openid email data:read');
    const res = await t.http().get('/me').set(bearer(id_token!));
    expectProblem(res, 401, 'INVALID_TOKEN');
    expect(res.headers['www-authenticate']).toMatch(/^Bearer error="invalid_token"/);
    expect(res.headers['www-authenticate']).not.toContain(id_token);
  });
});
