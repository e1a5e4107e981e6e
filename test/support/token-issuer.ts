import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import {
  exportJWK,
  generateKeyPair,
  SignJWT,
  type JWK,
  type JWTPayload,
  type CryptoKey,
} from 'jose';

/** A signing key the issuer holds: its `kid`, algorithm and key pair. */
export interface IssuerKey {
  kid: string;
  alg: 'RS256' | 'PS256' | 'ES256' | 'EdDSA';
  privateKey: CryptoKey;
  publicJwk: JWK;
}

export interface TokenOptions {
  /** Claims beside the defaults (iss, sub, aud, iat, exp); `undefined` removes a default. */
  claims?: Record<string, unknown>;
  /** Header `typ`; default `at+jwt` (RFC 9068); null: none. */
  typ?: string | null;
  /** The key to sign with; default the first published one. */
  key?: IssuerKey;
  /** Lifetime in seconds from now; default 300. */
  expiresIn?: number;
}

/**
 * An identity provider's keys on loopback, for the token cases a real provider will not issue
 * (expired, wrong audience, foreign keys): a discovery document and a JWKS over HTTP, tokens
 * signed with jose. `down()` makes both answer 503 (an issuer that is down); `published` is the
 * JWKS as served, so a test rotates keys by replacing it. Counts the JWKS fetches.
 */
export class TestTokenIssuer {
  readonly issuer: string;
  published: IssuerKey[] = [];
  /** Claims every token gets beside the defaults, before a token's own `claims`. */
  defaultClaims: Record<string, unknown> = {};
  jwksFetches = 0;
  discoveryFetches = 0;
  /** Every request received, also those answered 503 while down (fetch attempts). */
  requests = 0;
  private isDown = false;

  private constructor(
    private readonly server: Server,
    readonly port: number,
  ) {
    this.issuer = `http://127.0.0.1:${port}`;
  }

  static async start(): Promise<TestTokenIssuer> {
    let self: TestTokenIssuer | null = null;
    const server = createServer((req, res) => {
      const issuer = self;
      if (!issuer) return void res.writeHead(503).end();
      issuer.requests++;
      if (issuer.isDown) return void res.writeHead(503).end('down');
      if (req.url === '/.well-known/openid-configuration') {
        issuer.discoveryFetches++;
        res.writeHead(200, { 'content-type': 'application/json' });
        return void res.end(
          JSON.stringify({ issuer: issuer.issuer, jwks_uri: `${issuer.issuer}/jwks` }),
        );
      }
      if (req.url === '/jwks') {
        issuer.jwksFetches++;
        res.writeHead(200, { 'content-type': 'application/json' });
        return void res.end(
          JSON.stringify({
            keys: issuer.published.map((k) => ({ ...k.publicJwk, kid: k.kid, alg: k.alg })),
          }),
        );
      }
      res.writeHead(404).end();
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    self = new TestTokenIssuer(server, (server.address() as AddressInfo).port);
    self.published = [await TestTokenIssuer.key('k1', 'RS256')];
    return self;
  }

  /** A new key pair (not published until added to `published`). */
  static async key(kid: string, alg: IssuerKey['alg']): Promise<IssuerKey> {
    const { privateKey, publicKey } = await generateKeyPair(alg, { extractable: true });
    return { kid, alg, privateKey, publicJwk: await exportJWK(publicKey) };
  }

  /** The OIDC_ISSUERS entry for this issuer, with `extra` settings. */
  config(audience: string, extra: Record<string, unknown> = {}): Record<string, unknown> {
    return { issuer: this.issuer, audience, ...extra };
  }

  /** A signed access token for `sub` (default claims: iss, sub, aud, iat, exp). */
  async token(sub: string, audience: string, options: TokenOptions = {}): Promise<string> {
    const key = options.key ?? this.published[0];
    if (!key) throw new Error('the issuer publishes no key');
    const now = Math.floor(Date.now() / 1000);
    const payload: JWTPayload = {
      iss: this.issuer,
      sub,
      aud: audience,
      iat: now,
      exp: now + (options.expiresIn ?? 300),
    };
    for (const [name, value] of Object.entries({ ...this.defaultClaims, ...options.claims })) {
      if (value === undefined) delete payload[name];
      else payload[name] = value;
    }
    const typ = options.typ === undefined ? 'at+jwt' : options.typ;
    return new SignJWT(payload)
      .setProtectedHeader({ alg: key.alg, kid: key.kid, ...(typ !== null ? { typ } : {}) })
      .sign(key.privateKey);
  }

  /** Both documents answer 503 until `up()`. */
  down(): void {
    this.isDown = true;
  }

  up(): void {
    this.isDown = false;
  }

  async stop(): Promise<void> {
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }
}
