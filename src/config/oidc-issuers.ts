/**
 * The identity providers whose access tokens the service accepts (OIDC_ISSUERS), read and
 * checked once at start. docs/keys.md, "Authentication" shows Keycloak, Auth0 and Entra ID entries.
 */
export interface OidcIssuerConfig {
  /** The exact `iss` of its tokens. */
  issuer: string;
  /** A token's `aud` must hold one of these. */
  audiences: string[];
  /** Where the issuer's keys are found: its discovery document, unless `jwksUri` names them. */
  discoveryUrl: string;
  jwksUri: string | null;
  /** The claims read, where the provider names them differently. */
  claims: {
    subject: string;
    /** Tried in order: the first present names the token's client. */
    client: string[];
    /** Tried in order: a space-separated string or a list of strings. */
    scope: string[];
    email: string;
    /** The `accountId` of the sub profile a non-root client acts as. */
    accountId: string;
  };
  /** Clients whose tokens act as the root profile; any other client acts as a sub profile. */
  rootClients: string[];
  /** Whether an unknown identity's first token creates its profiles (else 403 UNKNOWN_IDENTITY). */
  provision: boolean;
  /** The scopes of a token without a scope claim; null: every scope (src/auth/access-grant.ts). */
  defaultScopes: string[] | null;
}

export const DEFAULT_CLAIMS: OidcIssuerConfig['claims'] = {
  subject: 'sub',
  client: ['azp', 'client_id'],
  scope: ['scope', 'scp'],
  email: 'email',
  accountId: 'sub',
};

const MAX_ISSUERS = 16;
const KEYS = new Set([
  'issuer',
  'audience',
  'discoveryUrl',
  'jwksUri',
  'claims',
  'rootClients',
  'provision',
  'defaultScopes',
]);
const CLAIM_KEYS = new Set(Object.keys(DEFAULT_CLAIMS));
const CLAIM_NAME = /^[A-Za-z0-9_:.\-/]{1,128}$/;

/** https, or http on a loopback host (a provider beside the service, tests). */
export function isTrustedUrl(value: unknown): value is string {
  if (typeof value !== 'string') return false;
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    return false;
  }
  if (url.protocol === 'https:') return true;
  return url.protocol === 'http:' && ['localhost', '127.0.0.1', '[::1]'].includes(url.hostname);
}

const isStringList = (value: unknown, min = 0): value is string[] =>
  Array.isArray(value) &&
  value.length >= min &&
  value.length <= 100 &&
  value.every((v) => typeof v === 'string' && v.length > 0 && v.length <= 256);

function claimsOf(value: unknown, where: string, problems: string[]): OidcIssuerConfig['claims'] {
  if (value === undefined) return DEFAULT_CLAIMS;
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    problems.push(`${where}.claims must be an object of claim names`);
    return DEFAULT_CLAIMS;
  }
  const given = value as Record<string, unknown>;
  const unknown = Object.keys(given).filter((key) => !CLAIM_KEYS.has(key));
  if (unknown.length > 0) problems.push(`${where}.claims: unknown entry ${unknown.join(', ')}`);
  const claims = { ...DEFAULT_CLAIMS };
  for (const name of ['subject', 'email', 'accountId'] as const) {
    const claim = given[name];
    if (claim === undefined) continue;
    if (typeof claim === 'string' && CLAIM_NAME.test(claim)) claims[name] = claim;
    else problems.push(`${where}.claims.${name} must be a claim name`);
  }
  for (const name of ['client', 'scope'] as const) {
    const claim = given[name];
    if (claim === undefined) continue;
    const list = typeof claim === 'string' ? [claim] : claim;
    if (isStringList(list, 1) && list.every((c) => CLAIM_NAME.test(c))) claims[name] = list;
    else problems.push(`${where}.claims.${name} must be a claim name or a list of them`);
  }
  return claims;
}

/** OIDC_ISSUERS read and checked: the issuers (none when unset), or every problem found. */
export function parseOidcIssuers(
  text: string | undefined,
): { issuers: OidcIssuerConfig[] } | { problems: string[] } {
  if (text === undefined || text.trim() === '') return { issuers: [] };
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    return { problems: ['OIDC_ISSUERS must be JSON: [{"issuer": …, "audience": …}, …]'] };
  }
  if (!Array.isArray(parsed) || parsed.length === 0 || parsed.length > MAX_ISSUERS) {
    return { problems: [`OIDC_ISSUERS must be a JSON list of 1-${MAX_ISSUERS} issuers`] };
  }
  const problems: string[] = [];
  const issuers: OidcIssuerConfig[] = [];
  parsed.forEach((value: unknown, index) => {
    const where = `OIDC_ISSUERS[${index}]`;
    if (typeof value !== 'object' || value === null || Array.isArray(value)) {
      problems.push(`${where} must be an object {"issuer", "audience", …}`);
      return;
    }
    const entry = value as Record<string, unknown>;
    const unknown = Object.keys(entry).filter((key) => !KEYS.has(key));
    if (unknown.length > 0) problems.push(`${where}: unknown setting ${unknown.join(', ')}`);
    const { issuer, audience, discoveryUrl, jwksUri, rootClients = [], provision = false } = entry;
    const defaultScopes = entry.defaultScopes ?? null;
    if (!isTrustedUrl(issuer)) {
      problems.push(`${where}.issuer must be an https URL (http only on a loopback host)`);
      return;
    }
    const audiences = typeof audience === 'string' ? [audience] : audience;
    if (!isStringList(audiences, 1)) problems.push(`${where}.audience must be a string or a list`);
    if (discoveryUrl !== undefined && !isTrustedUrl(discoveryUrl))
      problems.push(`${where}.discoveryUrl must be an https URL (http only on a loopback host)`);
    if (jwksUri !== undefined && !isTrustedUrl(jwksUri))
      problems.push(`${where}.jwksUri must be an https URL (http only on a loopback host)`);
    if (!isStringList(rootClients))
      problems.push(`${where}.rootClients must be a list of client ids`);
    if (typeof provision !== 'boolean') problems.push(`${where}.provision must be true or false`);
    if (defaultScopes !== null && !isStringList(defaultScopes))
      problems.push(`${where}.defaultScopes must be a list of scopes, or null for all of them`);
    if (issuers.some((known) => known.issuer === issuer))
      problems.push(`${where}.issuer is listed twice`);
    issuers.push({
      issuer,
      audiences: isStringList(audiences, 1) ? audiences : [],
      discoveryUrl:
        typeof discoveryUrl === 'string'
          ? discoveryUrl
          : `${issuer.replace(/\/$/, '')}/.well-known/openid-configuration`,
      jwksUri: typeof jwksUri === 'string' ? jwksUri : null,
      claims: claimsOf(entry.claims, where, problems),
      rootClients: isStringList(rootClients) ? rootClients : [],
      provision: provision === true,
      defaultScopes: isStringList(defaultScopes) ? defaultScopes : null,
    });
  });
  return problems.length > 0 ? { problems } : { issuers };
}

/**
 * The problems of the issuers' defaultScopes against the service's scope vocabulary: the config
 * does not know the vocabulary (it is the auth module's), so TokenVerifier calls this when the
 * app starts and throws a ConfigValidationError with them.
 */
export function unknownDefaultScopes(
  issuers: readonly OidcIssuerConfig[],
  scopes: readonly string[],
): string[] {
  const problems: string[] = [];
  issuers.forEach((issuer, index) => {
    const unknown = (issuer.defaultScopes ?? []).filter((scope) => !scopes.includes(scope));
    if (unknown.length > 0)
      problems.push(
        `OIDC_ISSUERS[${index}].defaultScopes: unknown scope ${unknown.join(', ')}; known: ${scopes.join(', ')}`,
      );
  });
  return problems;
}
