import { HttpStatus } from '@nestjs/common';
import { COMMON_ERRORS, defineErrors, DomainError } from '../common/errors';
import { SCOPES } from './access-grant';

/**
 * The codes auth owns: API keys and branches, and PROFILE_NOT_FOUND — auth answers it for the
 * sub profile of a key to mint and imports no feature module, so profile and lifecycle take it
 * from here.
 */
export const AUTH_ERRORS = defineErrors({
  INVALID_BRANCH: {
    status: HttpStatus.BAD_REQUEST,
    title: 'The branch name is not valid',
    example: { detail: "X-Branch must be '' or match ^[a-z0-9][a-z0-9._-]{0,62}$." },
  },
  BRANCH_MISMATCH: {
    status: HttpStatus.FORBIDDEN,
    title: 'The branch contradicts the API key',
    example: { detail: 'The key is bound to branch staging; X-Branch names another.' },
  },
  INSUFFICIENT_SCOPE: {
    status: HttpStatus.FORBIDDEN,
    title: 'The API key lacks the scope this route needs',
    example: { detail: 'This route needs the scope data:write, which the API key does not hold.' },
  },
  IP_NOT_ALLOWED: {
    status: HttpStatus.FORBIDDEN,
    title: 'The API key may not be used from this address',
    example: { detail: "The API key may not be used from 203.0.113.9; see the key's allowedIps." },
  },
  ORIGIN_NOT_ALLOWED: {
    status: HttpStatus.FORBIDDEN,
    title: 'The publishable key may not be used from this origin',
    example: {
      detail:
        "The publishable key may not be used from the origin https://elsewhere.example; see the key's allowedOrigins.",
    },
  },
  COLLECTION_NOT_ALLOWED: {
    status: HttpStatus.FORBIDDEN,
    title: 'The API key does not reach the collection',
    example: { detail: "This API key does not reach the collection 'secret' for read." },
  },
  INVALID_TOKEN: {
    status: HttpStatus.UNAUTHORIZED,
    title: 'The access token is not accepted',
    example: { detail: 'The token has expired (exp).' },
  },
  UNKNOWN_IDENTITY: {
    status: HttpStatus.FORBIDDEN,
    title: "The token's identity is not linked to a user",
    example: {
      detail:
        'No user is linked to subject 248289761001 of https://login.example.com, and its issuer does not provision users.',
    },
  },
  IDENTITY_PROVIDER_UNAVAILABLE: {
    status: HttpStatus.SERVICE_UNAVAILABLE,
    title: "The token's issuer cannot be reached for its keys",
    example: {
      detail:
        'The keys of https://login.example.com could not be fetched, and no cached key verifies the token. Retry after the time in Retry-After.',
    },
  },
  PROFILE_NOT_FOUND: { status: HttpStatus.NOT_FOUND, title: 'The profile does not exist' },
  API_KEY_NOT_FOUND: { status: HttpStatus.NOT_FOUND, title: 'The API key does not exist' },
  UNKNOWN_SCOPE: {
    status: HttpStatus.BAD_REQUEST,
    title: 'The scope is not one the service knows',
    example: { detail: 'Unknown scopes: data:delete. Known: profile:read, profile:write, …' },
  },
  SCOPE_ESCALATION: {
    status: HttpStatus.FORBIDDEN,
    title: 'A key may not give more than it has',
    example: {
      detail: 'The new key would have the scopes data:write, which the calling key lacks.',
    },
  },
});

/** The errors of the auth module; each fixes one code. */

export class ApiKeyNotFoundError extends DomainError {
  constructor(id: string) {
    super(AUTH_ERRORS.API_KEY_NOT_FOUND, `No API key ${id} of this user.`);
  }
}

export class InvalidBranchError extends DomainError {
  constructor(detail: string, field?: string) {
    super(
      AUTH_ERRORS.INVALID_BRANCH,
      detail,
      field === undefined ? undefined : [{ field, message: 'not a valid branch name' }],
    );
  }
}

/** A branch that contradicts the branch the key is bound to (X-Branch, or a key to mint). */
export class BranchMismatchError extends DomainError {
  constructor(detail: string, errors?: { field: string; message: string }[]) {
    super(AUTH_ERRORS.BRANCH_MISMATCH, detail, errors);
  }
}

/** A key asked for with scopes outside the vocabulary (src/auth/access-grant.ts SCOPES). */
export class UnknownScopeError extends DomainError {
  constructor(unknown: readonly string[]) {
    super(
      AUTH_ERRORS.UNKNOWN_SCOPE,
      `Unknown scopes: ${unknown.join(', ')}. Known: ${SCOPES.join(', ')}.`,
      unknown.map((scope) => ({ field: 'scopes', message: `unknown scope ${scope}` })),
    );
  }
}

/** A key would mint, or get by rotation, a key with rights it does not have itself. */
export class ScopeEscalationError extends DomainError {
  constructor(beyond: string) {
    super(
      AUTH_ERRORS.SCOPE_ESCALATION,
      `The key would have ${beyond}, which the calling key does not have: a key never gives more than it has (a limited key states the limits of the keys it mints).`,
    );
  }
}

/**
 * A key or token without the scope the request needs (docs/keys.md, "Authentication"), answered with
 * `WWW-Authenticate: Bearer error="insufficient_scope", scope="<scope>"` (RFC 6750, 3.1).
 */
export class InsufficientScopeError extends DomainError {
  constructor(
    private readonly scope: string,
    what = 'This route',
  ) {
    super(
      AUTH_ERRORS.INSUFFICIENT_SCOPE,
      `${what} needs the scope ${scope}, which the API key or token does not hold.`,
    );
  }

  override get headers(): Record<string, string> {
    return { 'WWW-Authenticate': `Bearer error="insufficient_scope", scope="${this.scope}"` };
  }
}

/** A wrong key from an address that used up its failed-authentication budget. */
export class TooManyFailedAuthenticationsError extends DomainError {
  constructor() {
    super(
      COMMON_ERRORS.RATE_LIMITED,
      'The API key is not valid, and this address has had too many failed authentications. Retry after the time in Retry-After.',
    );
  }
}

/** A sub key was asked for a sub profile that does not exist in the branch. */
export class SubProfileNotFoundError extends DomainError {
  constructor(clientId: string, accountId: string, branch: string) {
    super(
      AUTH_ERRORS.PROFILE_NOT_FOUND,
      `No sub profile with clientId ${clientId} and accountId ${accountId} in branch '${branch}'.`,
    );
  }
}

/** A key with `allowedIps` used from an address outside them (not a failed authentication). */
export class IpNotAllowedError extends DomainError {
  constructor(address: string) {
    super(
      AUTH_ERRORS.IP_NOT_ALLOWED,
      `The API key may not be used from ${address}; see the key's allowedIps.`,
    );
  }
}

/** A publishable key sent by a browser page of an origin outside its `allowedOrigins`. */
export class OriginNotAllowedError extends DomainError {
  constructor(origin: string) {
    super(
      AUTH_ERRORS.ORIGIN_NOT_ALLOWED,
      `The publishable key may not be used from the origin ${JSON.stringify(origin)}; see the key's allowedOrigins.`,
    );
  }
}

/**
 * A collection outside the key's `collections`, for what the request needs. The same answer
 * whether the collection exists or not: nothing is read about it first.
 */
export class CollectionNotAllowedError extends DomainError {
  /** `collection` null: the request would reach every collection, which the key does not. */
  constructor(collection: string | null, need: 'read' | 'write') {
    super(
      AUTH_ERRORS.COLLECTION_NOT_ALLOWED,
      collection === null
        ? `This API key reaches only the collections it names; this would ${need} every collection.`
        : `This API key does not reach the collection '${collection}' for ${need}.`,
    );
  }
}

/**
 * An access token refused: `check` names the check it failed, never the token. The guard answers
 * with `WWW-Authenticate: Bearer error="invalid_token"` (RFC 6750); no database is written.
 */
export class InvalidTokenError extends DomainError {
  constructor(readonly check: string) {
    super(AUTH_ERRORS.INVALID_TOKEN, check);
  }

  /** RFC 6750, 3.1: the check that failed, as a quoted-string. */
  override get headers(): Record<string, string> {
    return {
      'WWW-Authenticate': `Bearer error="invalid_token", error_description="${headerSafe(this.check)}"`,
    };
  }
}

/** A header's quoted-string: printable ASCII without quote or backslash. */
function headerSafe(text: string): string {
  let safe = '';
  for (const char of text) {
    const code = char.charCodeAt(0);
    safe += code < 0x20 || code > 0x7e || char === '"' || char === '\\' ? ' ' : char;
  }
  return safe;
}

/** A verified token whose identity is linked to no user, from an issuer that does not provision. */
export class UnknownIdentityError extends DomainError {
  constructor(issuer: string, subject: string) {
    super(
      AUTH_ERRORS.UNKNOWN_IDENTITY,
      `No user is linked to subject ${subject} of ${issuer}, and its issuer does not provision users.`,
    );
  }
}

/**
 * The issuer's discovery document or JWKS could not be fetched while no cached key fits the
 * token: the token is neither accepted nor refused. The guard sets Retry-After.
 */
export class IdentityProviderUnavailableError extends DomainError {
  constructor(
    issuer: string,
    readonly retryAfterSeconds: number,
  ) {
    super(
      AUTH_ERRORS.IDENTITY_PROVIDER_UNAVAILABLE,
      `The keys of ${issuer} could not be fetched, and no cached key verifies the token. Retry after the time in Retry-After.`,
    );
  }

  /** The next attempt's time: the problem filter would otherwise set its database default. */
  override get headers(): Record<string, string> {
    return { 'Retry-After': String(this.retryAfterSeconds) };
  }
}
