// The token-auth comparison's set-up: an identity provider's keys on loopback (a discovery
// document and a JWKS over HTTP, access tokens signed with jose as an issuer such as Keycloak
// hands them out: RFC 9068, RS256) and a service instance that trusts it through OIDC_ISSUERS,
// with the bench user linked to the token's identity so that both variants read the same items.
// The instance fetches the JWKS once and keeps it; the fetches are counted, so that the
// comparison can show the load ran on cached keys.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { exportJWK, generateKeyPair, SignJWT, type CryptoKey, type JWK } from 'jose';
import { call } from './api';
import { startService, type ServiceOptions, type Target } from './servers';

/** The `aud` the instance requires and the client its tokens come from (a root client). */
const AUDIENCE = 'https://profile-data.bench.test/';
const CLIENT = 'bench-app';
/** Longer than any run: the one token is used for every request, as an app reuses its token. */
const TOKEN_SECONDS = 24 * 3600;

const KID = 'bench-rs256';

export class BenchTokenIssuer {
  readonly issuer: string;
  jwksFetches = 0;

  private constructor(
    private readonly server: Server,
    private readonly privateKey: CryptoKey,
    port: number,
  ) {
    this.issuer = `http://127.0.0.1:${port}`;
  }

  static async start(): Promise<BenchTokenIssuer> {
    const { privateKey, publicKey } = await generateKeyPair('RS256', { extractable: true });
    const jwk: JWK = { ...(await exportJWK(publicKey)), kid: KID, alg: 'RS256', use: 'sig' };
    let self: BenchTokenIssuer | null = null;
    const server = createServer((req, res) => {
      if (!self) return void res.writeHead(503).end();
      if (req.url === '/.well-known/openid-configuration') {
        res.writeHead(200, { 'content-type': 'application/json' });
        return void res.end(
          JSON.stringify({ issuer: self.issuer, jwks_uri: `${self.issuer}/jwks` }),
        );
      }
      if (req.url === '/jwks') {
        self.jwksFetches++;
        res.writeHead(200, { 'content-type': 'application/json' });
        return void res.end(JSON.stringify({ keys: [jwk] }));
      }
      res.writeHead(404).end();
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    self = new BenchTokenIssuer(server, privateKey, (server.address() as AddressInfo).port);
    return self;
  }

  /** The OIDC_ISSUERS entry: tokens of `client` act as the root profile of their identity. */
  config(audience: string, client: string): Record<string, unknown> {
    return { issuer: this.issuer, audience, rootClients: [client] };
  }

  /** An access token of `subject` through `client`, valid for `seconds`. */
  token(
    subject: string,
    audience: string,
    client: string,
    scope: string,
    seconds: number,
  ): Promise<string> {
    const now = Math.floor(Date.now() / 1000);
    return new SignJWT({ client_id: client, scope })
      .setProtectedHeader({ alg: 'RS256', kid: KID, typ: 'at+jwt' })
      .setIssuer(this.issuer)
      .setSubject(subject)
      .setAudience(audience)
      .setIssuedAt(now)
      .setExpirationTime(now + seconds)
      .setJti(`bench-${now}`)
      .sign(this.privateKey);
  }

  async stop(): Promise<void> {
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }
}

/** The instance trusting the issuer, and the bench user's access token for it. */
export interface TokenService {
  target: Target;
  issuer: BenchTokenIssuer;
  accessToken: string;
  /** Why the token does not act as the bench user, when the link was refused. */
  linkProblem?: string;
}

/**
 * Starts the issuer and an instance (`service-token`, metrics on) configured with it, links the
 * bench user to the token's identity (PUT /admin/users/{subject}/identities) and signs the token.
 */
export async function startTokenService(
  options: Omit<ServiceOptions, 'name' | 'metrics'>,
  subject: string,
): Promise<TokenService> {
  const issuer = await BenchTokenIssuer.start();
  const target = await startService({
    ...options,
    name: 'service-token',
    metrics: true,
    env: { ...options.env, OIDC_ISSUERS: JSON.stringify([issuer.config(AUDIENCE, CLIENT)]) },
  });
  const tokenSubject = `bench-idp|${subject}`;
  const linked = await call(
    target.url,
    'PUT',
    `/admin/users/${encodeURIComponent(subject)}/identities`,
    {
      key: options.adminKey,
      body: [{ issuer: issuer.issuer, subject: tokenSubject }],
    },
  );
  const accessToken = await issuer.token(
    tokenSubject,
    AUDIENCE,
    CLIENT,
    'data:read',
    TOKEN_SECONDS,
  );
  return {
    target,
    issuer,
    accessToken,
    ...(linked.status === 200
      ? {}
      : { linkProblem: `PUT /admin/users/{subject}/identities answered ${linked.status}` }),
  };
}
