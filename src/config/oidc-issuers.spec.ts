import { DEFAULT_CLAIMS, parseOidcIssuers, unknownDefaultScopes } from './oidc-issuers';

const ISSUER = 'https://idp.example.test/realms/app';

describe('parseOidcIssuers', () => {
  it('reads nothing when unset or blank', () => {
    expect(parseOidcIssuers(undefined)).toEqual({ issuers: [] });
    expect(parseOidcIssuers('  ')).toEqual({ issuers: [] });
  });

  it('gives the defaults: discovery beside the issuer, the usual claims, no provisioning', () => {
    const parsed = parseOidcIssuers(JSON.stringify([{ issuer: `${ISSUER}/`, audience: 'api' }]));
    expect(parsed).toEqual({
      issuers: [
        {
          issuer: `${ISSUER}/`,
          audiences: ['api'],
          discoveryUrl: `${ISSUER}/.well-known/openid-configuration`,
          jwksUri: null,
          claims: DEFAULT_CLAIMS,
          rootClients: [],
          provision: false,
          defaultScopes: null,
        },
      ],
    });
  });

  it('reads claim names given as a name or a list', () => {
    const parsed = parseOidcIssuers(
      JSON.stringify([
        { issuer: ISSUER, audience: ['a', 'b'], claims: { scope: 'roles', client: ['cid'] } },
      ]),
    );
    expect(parsed).toMatchObject({
      issuers: [{ audiences: ['a', 'b'], claims: { scope: ['roles'], client: ['cid'] } }],
    });
  });

  it.each([
    ['not JSON', '{', /must be JSON/],
    ['an empty list', '[]', /list of 1-16 issuers/],
    [
      'a plain http issuer',
      JSON.stringify([{ issuer: 'http://idp.example.test', audience: 'a' }]),
      /issuer must be an https URL/,
    ],
    ['no audience', JSON.stringify([{ issuer: ISSUER }]), /audience must be a string or a list/],
    [
      'an unknown setting',
      JSON.stringify([{ issuer: ISSUER, audience: 'a', scopes: [] }]),
      /unknown setting scopes/,
    ],
    [
      'an issuer twice',
      JSON.stringify([
        { issuer: ISSUER, audience: 'a' },
        { issuer: ISSUER, audience: 'b' },
      ]),
      /listed twice/,
    ],
    [
      'a bad claim name',
      JSON.stringify([{ issuer: ISSUER, audience: 'a', claims: { subject: 'a b' } }]),
      /claims\.subject must be a claim name/,
    ],
  ])('refuses %s', (_name, text, problem) => {
    const parsed = parseOidcIssuers(text);
    expect('problems' in parsed && parsed.problems.some((p) => problem.test(p))).toBe(true);
  });
});

describe('unknownDefaultScopes', () => {
  it('names the unknown scopes of each issuer, none for known ones or null', () => {
    const parsed = parseOidcIssuers(
      JSON.stringify([
        { issuer: ISSUER, audience: 'a', defaultScopes: ['data:read'] },
        { issuer: 'https://other.example.test', audience: 'a', defaultScopes: ['data:read', 'x'] },
        { issuer: 'https://third.example.test', audience: 'a' },
      ]),
    );
    if (!('issuers' in parsed)) throw new Error('expected issuers');
    expect(unknownDefaultScopes(parsed.issuers, ['data:read', 'data:write'])).toEqual([
      'OIDC_ISSUERS[1].defaultScopes: unknown scope x; known: data:read, data:write',
    ]);
  });
});
