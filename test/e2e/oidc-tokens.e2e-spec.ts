import { exportSPKI, importJWK, SignJWT, type CryptoKey } from 'jose';
import type { CommandStartedEvent } from 'mongodb';
import { createTestApp, type TestApp } from '../support/app';
import { BackgroundTasks } from '../../src/common/scheduling/background-tasks';
import { holdClock, moveClock } from '../support/held-clock';
import { expectProblem } from '../support/problems';
import { TestTokenIssuer } from '../support/token-issuer';

/**
 * Which access tokens are accepted (docs/authentication.md, "Access tokens: what is checked"), against an issuer
 * on loopback. The issuer does not provision, so an accepted token of an identity linked to no
 * user is answered 403 UNKNOWN_IDENTITY: that answer is "accepted" here, a refusal is 401
 * INVALID_TOKEN with `WWW-Authenticate: Bearer error="invalid_token"`.
 */
const AUDIENCE = 'https://api.example.test';
const COOLDOWN_MS = 1_000;
const MAX_AGE_MS = 60_000;
const MAX_TOKEN_AGE_S = 3_600;

let t: TestApp;
let issuer: TestTokenIssuer;
/** A second issuer, down from the start: no key of it was ever fetched. */
let unreached: TestTokenIssuer;
/** The write commands the app sent while `recording`. */
const writes: string[] = [];
let recording = false;
let subjects = 0;
/** A subject no test used before: each token is new, never found in the verified-token cache. */
const fresh = () => `user-${++subjects}`;

beforeAll(async () => {
  issuer = await TestTokenIssuer.start();
  unreached = await TestTokenIssuer.start();
  // A client, as access tokens name one (a token naming none is refused: a test of its own).
  for (const each of [issuer, unreached]) each.defaultClaims = { client_id: 'test-app' };
  unreached.down();
  t = await createTestApp(__filename, {
    OIDC_ISSUERS: JSON.stringify([
      issuer.config(AUDIENCE, { provision: false }),
      unreached.config(AUDIENCE, { provision: false }),
    ]),
    OIDC_JWKS_COOLDOWN_MS: String(COOLDOWN_MS),
    OIDC_JWKS_MAX_AGE_MS: String(MAX_AGE_MS),
    OIDC_MAX_TOKEN_AGE_S: String(MAX_TOKEN_AGE_S),
    METRICS_DATABASE_COMMANDS: 'true',
  });
  // Every write recorded must be a request's: the instance's background tasks (sweeps that run
  // when the held clock is moved past their interval) are stopped for this file.
  await t.app.get(BackgroundTasks).onModuleDestroy();
  t.connection.getClient().on('commandStarted', (event: CommandStartedEvent) => {
    if (recording && ['insert', 'update', 'delete', 'findAndModify'].includes(event.commandName))
      writes.push(`${event.commandName} ${String(event.command[event.commandName])}`);
  });
  // The app's Date stands still for the whole file and moves only forward when a test moves it:
  // the JWKS's age, the cooldown and the pause after a failed fetch are measured on it.
  holdClock();
});

afterAll(async () => {
  jest.useRealTimers();
  await t?.close();
  await issuer?.stop();
  await unreached?.stop();
});

const me = (token: string) => t.http().get('/me').set('Authorization', `Bearer ${token}`);

async function expectAccepted(token: string): Promise<void> {
  const res = await me(token);
  expectProblem(res, 403, 'UNKNOWN_IDENTITY');
  expect(res.headers['www-authenticate']).toBeUndefined();
}

async function expectRefused(token: string, check: RegExp): Promise<void> {
  const res = await me(token);
  expectProblem(res, 401, 'INVALID_TOKEN');
  const header = res.headers['www-authenticate'];
  expect(header).toMatch(/^Bearer error="invalid_token", error_description="[^"]+"$/);
  expect(header).toMatch(check);
  expect(res.body.detail).toMatch(check);
  // The token, or any part of it, is never repeated.
  for (const part of token.split('.').filter((p) => p.length > 8))
    expect(`${header} ${res.body.detail}`).not.toContain(part);
}

const now = () => Math.floor(Date.now() / 1000);
const base64url = (value: unknown) => Buffer.from(JSON.stringify(value)).toString('base64url');

describe('accepted access tokens', () => {
  it.each([
    ['an RFC 9068 token (typ at+jwt)', 'at+jwt'],
    ['an RFC 9068 token (typ application/at+jwt)', 'application/at+jwt'],
    ['a plain JWT access token (typ JWT)', 'JWT'],
    ['a plain JWT access token (no typ)', null],
  ])('accepts %s', async (_name, typ) => {
    await expectAccepted(await issuer.token(fresh(), AUDIENCE, { typ }));
  });

  it('accepts a token of every allowed algorithm, and a token within the clock skew', async () => {
    for (const alg of ['PS256', 'ES256', 'EdDSA'] as const) {
      const key = await TestTokenIssuer.key(`k-${alg}`, alg);
      issuer.published.push(key);
    }
    moveClock(COOLDOWN_MS + 1);
    for (const key of issuer.published.slice(1))
      await expectAccepted(await issuer.token(fresh(), AUDIENCE, { key }));
    // Expired 30 s ago and issued 30 s ahead: both within the 60 s skew.
    await expectAccepted(await issuer.token(fresh(), AUDIENCE, { expiresIn: -30 }));
    await expectAccepted(await issuer.token(fresh(), AUDIENCE, { claims: { iat: now() + 30 } }));
  });
});

describe('refused access tokens', () => {
  it.each<[string, () => Promise<string>, RegExp]>([
    [
      'an expired token',
      () => issuer.token(fresh(), AUDIENCE, { expiresIn: -120 }),
      /expired \(exp\)/,
    ],
    [
      'a token without exp',
      () => issuer.token(fresh(), AUDIENCE, { claims: { exp: undefined } }),
      /no exp claim/,
    ],
    [
      'a token not valid yet (nbf)',
      () => issuer.token(fresh(), AUDIENCE, { claims: { nbf: now() + 600 } }),
      /not valid yet \(nbf\)/,
    ],
    [
      'a token issued in the future (iat)',
      () => issuer.token(fresh(), AUDIENCE, { claims: { iat: now() + 600 }, expiresIn: 900 }),
      /iat claim is in the future/,
    ],
    [
      'a token older than OIDC_MAX_TOKEN_AGE_S',
      () => issuer.token(fresh(), AUDIENCE, { claims: { iat: now() - MAX_TOKEN_AGE_S - 120 } }),
      /older than OIDC_MAX_TOKEN_AGE_S/,
    ],
    [
      'a token for another audience',
      () => issuer.token(fresh(), 'https://other.example.test'),
      /audience \(aud\)/,
    ],
    [
      'a token of an unconfigured issuer',
      () => issuer.token(fresh(), AUDIENCE, { claims: { iss: 'https://idp.example.test' } }),
      /issuer \(iss\) is not a trusted issuer/,
    ],
    [
      'a token without a subject',
      () => issuer.token(fresh(), AUDIENCE, { claims: { sub: undefined } }),
      /no subject claim \(sub\)/,
    ],
    [
      'a token naming no client (an ID token of a code flow without a nonce looks so)',
      () => issuer.token(fresh(), AUDIENCE, { typ: null, claims: { client_id: undefined } }),
      /names no client \(azp, client_id\)/,
    ],
    [
      'an ID token (nonce)',
      () => issuer.token(fresh(), AUDIENCE, { typ: 'JWT', claims: { nonce: 'n-0S6_WzA2Mj' } }),
      /is an ID token \(it carries nonce\)/,
    ],
    [
      'an ID token (at_hash)',
      () =>
        issuer.token(fresh(), AUDIENCE, {
          typ: null,
          claims: { at_hash: 'HK6E_P6Dh8Y93mRNtsDB1Q' },
        }),
      /is an ID token \(it carries at_hash\)/,
    ],
    [
      "an ID token (Keycloak's typ ID)",
      () => issuer.token(fresh(), AUDIENCE, { typ: 'JWT', claims: { typ: 'ID' } }),
      /is an ID token \(typ ID\)/,
    ],
    [
      'a token whose header typ is not an access token type',
      () => issuer.token(fresh(), AUDIENCE, { typ: 'logout+jwt' }),
      /not an access token: its header typ/,
    ],
    [
      'a token with a bad signature (signed by a key the issuer does not publish)',
      async () =>
        issuer.token(fresh(), AUDIENCE, { key: { ...(await TestTokenIssuer.key('k1', 'RS256')) } }),
      /signature does not verify/,
    ],
    [
      'an unsigned token (alg none)',
      () =>
        Promise.resolve(
          `${base64url({ alg: 'none', typ: 'at+jwt' })}.${base64url({
            iss: issuer.issuer,
            sub: fresh(),
            aud: AUDIENCE,
            iat: now(),
            exp: now() + 300,
          })}.`,
        ),
      /algorithm \(alg\) is not accepted/,
    ],
    [
      "an HS256 token whose secret is the issuer's public key",
      async () => {
        const key = issuer.published[0]!;
        const pem = await exportSPKI(
          (await importJWK(key.publicJwk, key.alg, { extractable: true })) as CryptoKey,
        );
        return new SignJWT({ sub: fresh(), scope: 'data:write' })
          .setProtectedHeader({ alg: 'HS256', kid: key.kid, typ: 'at+jwt' })
          .setIssuer(issuer.issuer)
          .setAudience(AUDIENCE)
          .setIssuedAt()
          .setExpirationTime('5m')
          .sign(new TextEncoder().encode(pem));
      },
      /algorithm \(alg\) is not accepted/,
    ],
  ])('refuses %s, naming the failed check, and writes nothing', async (_name, make, check) => {
    const token = await make();
    writes.length = 0;
    recording = true;
    try {
      await expectRefused(token, check);
    } finally {
      recording = false;
    }
    expect(writes).toEqual([]);
  });

  it('refuses a token that is not a JWT once decoded', async () => {
    await expectRefused('eyJub3QiOiJqc29u.eyJzdWIiOiJ4In0.c2ln', /not a well-formed JWT/);
  });
});

describe('the issuer keys', () => {
  it('finds a key rotated at the provider with one JWKS fetch, at most once per cooldown', async () => {
    await expectAccepted(await issuer.token(fresh(), AUDIENCE));
    const rotated = await TestTokenIssuer.key('k-rotated', 'RS256');
    issuer.published.push(rotated);
    moveClock(COOLDOWN_MS + 1);
    const before = issuer.jwksFetches;
    await expectAccepted(await issuer.token(fresh(), AUDIENCE, { key: rotated }));
    expect(issuer.jwksFetches).toBe(before + 1);
    // A made-up kid within the cooldown: refused, and no fetch.
    const madeUp = await TestTokenIssuer.key('k-made-up', 'RS256');
    for (let i = 0; i < 3; i++)
      await expectRefused(
        await issuer.token(fresh(), AUDIENCE, { key: madeUp }),
        /No key of the token's issuer matches/,
      );
    expect(issuer.jwksFetches).toBe(before + 1);
    // The rotated key keeps working without a fetch.
    await expectAccepted(await issuer.token(fresh(), AUDIENCE, { key: rotated }));
    expect(issuer.jwksFetches).toBe(before + 1);
  });

  it('keeps verifying with cached keys while the issuer is down, also past the JWKS max age', async () => {
    await expectAccepted(await issuer.token(fresh(), AUDIENCE));
    issuer.down();
    try {
      const attempts = issuer.requests;
      await expectAccepted(await issuer.token(fresh(), AUDIENCE));
      expect(issuer.requests).toBe(attempts);
      // Past the max age the set is fetched again; that fails, and the last fetched set serves.
      moveClock(MAX_AGE_MS + 1);
      await expectAccepted(await issuer.token(fresh(), AUDIENCE));
      expect(issuer.requests).toBe(attempts + 1);
      // Paused by the failure: no attempt per request.
      for (let i = 0; i < 3; i++) await expectAccepted(await issuer.token(fresh(), AUDIENCE));
      expect(issuer.requests).toBe(attempts + 1);
      // A kid no cached key has, while the issuer cannot be asked: 503, not a guess.
      const unknownKey = await TestTokenIssuer.key('k-unseen', 'ES256');
      const res = await me(await issuer.token(fresh(), AUDIENCE, { key: unknownKey }));
      expectProblem(res, 503, 'IDENTITY_PROVIDER_UNAVAILABLE');
      expect(res.headers['retry-after']).toBe(String(Math.ceil(COOLDOWN_MS / 1000)));
      expect(res.headers['www-authenticate']).toBeUndefined();
      expect(issuer.requests).toBe(attempts + 1);
      // After the pause, the next attempt is made (one), and once up, the set is fresh again.
      issuer.up();
      moveClock(COOLDOWN_MS + 1);
      await expectAccepted(await issuer.token(fresh(), AUDIENCE));
      expect(issuer.requests).toBe(attempts + 2);
    } finally {
      issuer.up();
    }
  });

  it('answers 503 with Retry-After for an issuer never reached, and retries its discovery after the pause', async () => {
    writes.length = 0;
    recording = true;
    const res = await me(await unreached.token(fresh(), AUDIENCE));
    recording = false;
    expectProblem(res, 503, 'IDENTITY_PROVIDER_UNAVAILABLE');
    expect(res.headers['retry-after']).toBe(String(Math.ceil(COOLDOWN_MS / 1000)));
    expect(res.headers['www-authenticate']).toBeUndefined();
    expect(writes).toEqual([]);
    const attempts = unreached.requests;
    expect(attempts).toBe(1);
    // Within the pause: no attempt.
    expectProblem(
      await me(await unreached.token(fresh(), AUDIENCE)),
      503,
      'IDENTITY_PROVIDER_UNAVAILABLE',
    );
    expect(unreached.requests).toBe(attempts);
    // Up, after the pause: a burst shares one discovery fetch and one JWKS fetch.
    unreached.up();
    moveClock(COOLDOWN_MS + 1);
    const tokens = await Promise.all(
      Array.from({ length: 5 }, () => unreached.token(fresh(), AUDIENCE)),
    );
    const answers = await Promise.all(tokens.map((token) => me(token)));
    for (const answer of answers) expectProblem(answer, 403, 'UNKNOWN_IDENTITY');
    expect({ discovery: unreached.discoveryFetches, jwks: unreached.jwksFetches }).toEqual({
      discovery: 1,
      jwks: 1,
    });
  });
});

describe('the verified-token cache', () => {
  it('answers a token again without a fetch, and refuses it from its exp on', async () => {
    const token = await issuer.token(fresh(), AUDIENCE, { expiresIn: 120 });
    await expectAccepted(token);
    await expectAccepted(token);
    // Past exp and the 60 s skew: refused although it was verified before.
    moveClock((120 + 60) * 1000);
    await expectRefused(token, /expired \(exp\)/);
  });
});
