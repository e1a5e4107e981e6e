import type { FieldError } from '../common/errors';
import { ValidationFailedError } from '../common/errors';
import type { AccessGrant, Scope } from './access-grant';
import type { GrantBounds, GrantRequest } from './key-grant';

/**
 * A publishable key: a key meant to sit in a web page's JavaScript. Read-only by construction —
 * its grant holds only `data:read` and `events:read`, every named collection at `read`, and the
 * write routes do not list its kind (403 whatever a collection's rules say); the access plan
 * reads through each collection's `public.read` rule without `protectedFields.public`. Browsers
 * may use it only from its `allowedOrigins` (ApiKeyGuard, src/common/http/cors.ts).
 */

/** What a publishable key may do, whatever it is minted with. */
export const PUBLISHABLE_SCOPES: readonly Scope[] = ['data:read', 'events:read'];

export interface PublishableBounds extends GrantBounds {
  /** Origins of `allowedOrigins` at most (API_KEY_MAX_ALLOWED_ORIGINS). */
  maxAllowedOrigins: number;
}

export interface PublishableRequest extends GrantRequest {
  clientId?: string;
  accountId?: string;
  allowedOrigins?: readonly string[] | null;
}

/** A collection name, exactly (a publishable key names each collection it reads). */
const COLLECTION_NAME = /^[A-Za-z][A-Za-z0-9_-]{0,63}$/;

/**
 * The grant and origins of a new publishable key, checked: `collections` a list of 1 to
 * API_KEY_MAX_COLLECTIONS collection names (no patterns: a key in a page reaches only what is
 * named), `allowedOrigins` 1 to API_KEY_MAX_ALLOWED_ORIGINS browser origins, and none of the
 * members of other kinds (`scopes`, `clientId`, `accountId`). 400 VALIDATION_FAILED naming each.
 */
export function publishableKeyOf(
  request: PublishableRequest,
  bounds: PublishableBounds,
): { grant: AccessGrant; allowedOrigins: string[] } {
  const errors: FieldError[] = [];
  for (const member of ['scopes', 'clientId', 'accountId'] as const)
    if (request[member] !== undefined && request[member] !== null)
      errors.push({ field: member, message: 'is not for a publishable key' });
  const collections = checkNames(request.collections, bounds, errors);
  const allowedOrigins = checkOrigins(request.allowedOrigins, bounds, errors);
  if (errors.length > 0) throw new ValidationFailedError(errors);
  return {
    grant: {
      scopes: [...PUBLISHABLE_SCOPES],
      collections: Object.fromEntries(collections.map((name) => [name, 'read' as const])),
      allowedIps: request.allowedIps ? [...request.allowedIps] : null,
    },
    allowedOrigins,
  };
}

/** `allowedOrigins` on a key of another kind: 400 (it would be ignored otherwise). */
export function refuseAllowedOrigins(request: PublishableRequest): void {
  if (request.allowedOrigins !== undefined && request.allowedOrigins !== null)
    throw new ValidationFailedError([
      { field: 'allowedOrigins', message: 'is only for a publishable key ("kind": "publishable")' },
    ]);
}

function checkNames(
  collections: unknown,
  bounds: PublishableBounds,
  errors: FieldError[],
): string[] {
  if (!Array.isArray(collections) || collections.length === 0) {
    errors.push({
      field: 'collections',
      message: 'must list at least one collection name (required for a publishable key)',
    });
    return [];
  }
  if (collections.length > bounds.maxCollections) {
    errors.push({
      field: 'collections',
      message: `must name at most ${bounds.maxCollections} collections (API_KEY_MAX_COLLECTIONS)`,
    });
    return [];
  }
  collections.forEach((name, i) => {
    if (typeof name !== 'string' || !COLLECTION_NAME.test(name))
      errors.push({
        field: `collections[${i}]`,
        message: 'must be a collection name (^[A-Za-z][A-Za-z0-9_-]{0,63}$; no patterns)',
      });
  });
  return [...new Set(collections as string[])];
}

function checkOrigins(
  origins: readonly string[] | null | undefined,
  bounds: PublishableBounds,
  errors: FieldError[],
): string[] {
  if (
    !Array.isArray(origins) ||
    origins.length === 0 ||
    origins.length > bounds.maxAllowedOrigins
  ) {
    errors.push({
      field: 'allowedOrigins',
      message: `must hold 1 to ${bounds.maxAllowedOrigins} origins (API_KEY_MAX_ALLOWED_ORIGINS)`,
    });
    return [];
  }
  origins.forEach((origin, i) => {
    if (!isBrowserOrigin(origin))
      errors.push({
        field: `allowedOrigins[${i}]`,
        message:
          'must be an origin as a browser sends it: http(s)://host[:port], lower case, no path, no default port, no *',
      });
  });
  return [...new Set<string>(origins as readonly string[])];
}

/**
 * An origin exactly as a browser sends it in `Origin`: `http` or `https`, a host, an optional
 * non-default port, nothing else (no path, query, user, trailing slash or wildcard).
 */
export function isBrowserOrigin(value: unknown): value is string {
  if (typeof value !== 'string' || value.includes('*')) return false;
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    return false;
  }
  return (url.protocol === 'https:' || url.protocol === 'http:') && url.origin === value;
}
