// A certified OpenID Provider (oidc-provider) on a loopback port, for the e2e tests. The library
// is ES modules only, which jest's module registry cannot load: test/support/oidc-provider.ts
// starts this file with `node` and talks to the provider over HTTP only.
//
// Settings come as JSON in the first argument (see OidcProviderSettings in oidc-provider.ts).
// Once listening it prints one line to stdout: {"issuer": "http://127.0.0.1:<port>"}.
import { generateKeyPairSync, randomBytes } from 'node:crypto';
import { createServer } from 'node:http';
import Provider, { errors } from 'oidc-provider';

const settings = JSON.parse(process.argv[2] ?? '{}');
const { resource, resourceScopes, publicClient, confidentialClient } = settings;

// A signing key of its own per run: the tests find it through discovery and the JWKS.
const { privateKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
const signingKey = { ...privateKey.export({ format: 'jwk' }), kid: 'provider-rs256', use: 'sig' };

const server = createServer();
server.listen(0, '127.0.0.1', () => {
  const { port } = server.address();
  const issuer = `http://127.0.0.1:${port}`;
  const provider = new Provider(issuer, {
    clients: [
      {
        // An app in a browser: no secret, authorization code with PKCE.
        client_id: publicClient.id,
        token_endpoint_auth_method: 'none',
        application_type: 'native',
        redirect_uris: [publicClient.redirectUri],
        grant_types: ['authorization_code'],
        response_types: ['code'],
      },
      {
        // A backend acting for itself: client credentials, no user.
        client_id: confidentialClient.id,
        client_secret: confidentialClient.secret,
        grant_types: ['client_credentials'],
        redirect_uris: [],
        response_types: [],
      },
    ],
    jwks: { keys: [signingKey] },
    cookies: { keys: [randomBytes(32).toString('hex')] },
    pkce: { required: () => true },
    scopes: ['openid', 'email', ...resourceScopes],
    claims: { openid: ['sub'], email: ['email', 'email_verified'] },
    async findAccount(_ctx, accountId) {
      return {
        accountId,
        claims: async () => ({ sub: accountId, email: `${accountId}@example.test` }),
      };
    },
    // The user's email in their access tokens too: a resource server provisions with it.
    async extraTokenClaims(_ctx, token) {
      if (!token.accountId) return undefined;
      return { email: `${token.accountId}@example.test` };
    },
    features: {
      devInteractions: { enabled: true },
      clientCredentials: { enabled: true },
      resourceIndicators: {
        enabled: true,
        defaultResource: () => resource,
        useGrantedResource: () => true,
        // RFC 9068 access tokens (typ at+jwt) for the service, its scopes only.
        getResourceServerInfo: (_ctx, indicator) => {
          if (indicator !== resource) throw new errors.InvalidTarget();
          return {
            scope: resourceScopes.join(' '),
            audience: resource,
            accessTokenFormat: 'jwt',
            accessTokenTTL: 300,
            jwt: { sign: { alg: 'RS256' } },
          };
        },
      },
    },
  });
  server.on('request', provider.callback());
  process.stdout.write(`${JSON.stringify({ issuer })}\n`);
});

// The parent's end is this process's end.
process.on('SIGTERM', () => server.close(() => process.exit(0)));
process.stdin.on('end', () => process.exit(0));
process.stdin.resume();
