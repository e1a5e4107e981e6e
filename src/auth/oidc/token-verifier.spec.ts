import { ConfigValidationError, loadConfig, type AppConfig } from '../../config';
import { TestTokenIssuer } from '../../../test/support/token-issuer';
import { holdClock, moveClock } from '../../../test/support/held-clock';
import { InvalidTokenError } from '../auth.errors';
import { TokenVerifier } from './token-verifier';

/** TokenVerifier alone, against a loopback issuer: the rules e2e cases do not reach cheaply. */
const AUDIENCE = 'https://api.example.test';
let issuer: TestTokenIssuer;

beforeAll(async () => {
  issuer = await TestTokenIssuer.start();
  issuer.defaultClaims = { client_id: 'test-app' };
});
afterAll(() => issuer.stop());
afterEach(() => jest.useRealTimers());

function configWith(env: Record<string, string>, entry: Record<string, unknown> = {}): AppConfig {
  return loadConfig({
    OIDC_ISSUERS: JSON.stringify([issuer.config(AUDIENCE, entry)]),
    ...env,
  });
}

async function refusal(verifier: TokenVerifier, token: string): Promise<string> {
  try {
    await verifier.verify(token);
  } catch (error) {
    if (error instanceof InvalidTokenError) return error.check;
    throw error;
  }
  throw new Error('the token was accepted');
}

const now = () => Math.floor(Date.now() / 1000);

describe('TokenVerifier', () => {
  it('refuses an iat in the future beyond the skew also without OIDC_MAX_TOKEN_AGE_S', async () => {
    const verifier = new TokenVerifier(configWith({ OIDC_CLOCK_SKEW_S: '60' }));
    const ahead = (s: number) =>
      issuer.token('alice', AUDIENCE, { claims: { iat: now() + s }, expiresIn: 900 });
    expect(await refusal(verifier, await ahead(61 + 5))).toMatch(/iat claim is in the future/);
    await expect(verifier.verify(await ahead(30))).resolves.toMatchObject({ subject: 'alice' });
  });

  it('refuses a header typ that is not a string as not an access token', async () => {
    const verifier = new TokenVerifier(configWith({}));
    const token = await issuer.token('henry', AUDIENCE, { typ: 7 as unknown as string });
    expect(await refusal(verifier, token)).toMatch(/not an access token: its header typ/);
  });

  it.each<[string, Record<string, unknown>, unknown, string[] | null]>([
    [
      'a space-separated claim: its service scopes only',
      {},
      'data:read openid files:write',
      ['data:read', 'files:write'],
    ],
    ['a list claim (scp)', {}, ['profile:read', 'email'], ['profile:read']],
    ['a claim naming no service scope: none', { defaultScopes: ['data:read'] }, 'openid email', []],
    [
      'no claim: the defaultScopes',
      { defaultScopes: ['data:read', 'events:read'] },
      undefined,
      ['data:read', 'events:read'],
    ],
    ['no claim, no defaultScopes: every scope', {}, undefined, null],
  ])('maps %s', async (_name, entry, claim, scopes) => {
    const verifier = new TokenVerifier(configWith({}, entry));
    const name = Array.isArray(claim) ? 'scp' : 'scope';
    const token = await issuer.token('bob', AUDIENCE, { claims: { [name]: claim } });
    expect((await verifier.verify(token)).scopes).toEqual(scopes);
  });

  it('refuses to start with a defaultScopes naming a scope the service does not have', () => {
    const config = configWith({}, { defaultScopes: ['data:read', 'data:admin', 'openid'] });
    expect(() => new TokenVerifier(config)).toThrow(ConfigValidationError);
    try {
      new TokenVerifier(config);
    } catch (error) {
      expect((error as ConfigValidationError).problems).toEqual([
        expect.stringMatching(
          /^OIDC_ISSUERS\[0\]\.defaultScopes: unknown scope data:admin, openid;/,
        ),
      ]);
    }
  });

  describe('the verified-token cache', () => {
    it('answers a token it verified with the same result, until its exp and the skew', async () => {
      holdClock(Math.floor(Date.now() / 1000) * 1000);
      const verifier = new TokenVerifier(configWith({ OIDC_CLOCK_SKEW_S: '10' }));
      const token = await issuer.token('carol', AUDIENCE, { expiresIn: 60 });
      const first = await verifier.verify(token);
      expect(await verifier.verify(token)).toBe(first);
      moveClock((60 + 10) * 1000 - 1);
      expect(await verifier.verify(token)).toBe(first);
      moveClock(1);
      expect(await refusal(verifier, token)).toMatch(/expired \(exp\)/);
    });

    it('ends an entry at the maximum age when that comes before exp', async () => {
      holdClock(Math.floor(Date.now() / 1000) * 1000);
      const verifier = new TokenVerifier(
        configWith({ OIDC_CLOCK_SKEW_S: '0', OIDC_MAX_TOKEN_AGE_S: '30' }),
      );
      const token = await issuer.token('dave', AUDIENCE, { expiresIn: 600 });
      const first = await verifier.verify(token);
      moveClock(29_000);
      expect(await verifier.verify(token)).toBe(first);
      moveClock(2_000);
      expect(await refusal(verifier, token)).toMatch(/older than OIDC_MAX_TOKEN_AGE_S/);
    });

    it('holds at most OIDC_TOKEN_CACHE_SIZE tokens, and none with 0', async () => {
      const bounded = new TokenVerifier(configWith({ OIDC_TOKEN_CACHE_SIZE: '1' }));
      const off = new TokenVerifier(configWith({ OIDC_TOKEN_CACHE_SIZE: '0' }));
      const a = await issuer.token('erin', AUDIENCE);
      const b = await issuer.token('frank', AUDIENCE);
      const first = await bounded.verify(a);
      await bounded.verify(b);
      expect(await bounded.verify(a)).not.toBe(first);
      expect(await off.verify(a)).not.toBe(await off.verify(a));
    });
  });

  it('shares one discovery and one JWKS fetch among concurrent first tokens', async () => {
    const verifier = new TokenVerifier(configWith({}));
    const before = { discovery: issuer.discoveryFetches, jwks: issuer.jwksFetches };
    const tokens = await Promise.all(
      ['g1', 'g2', 'g3', 'g4'].map((sub) => issuer.token(sub, AUDIENCE)),
    );
    await Promise.all(tokens.map((token) => verifier.verify(token)));
    expect({ discovery: issuer.discoveryFetches, jwks: issuer.jwksFetches }).toEqual({
      discovery: before.discovery + 1,
      jwks: before.jwks + 1,
    });
  });
});
