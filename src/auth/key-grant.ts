import { isIP } from 'node:net';
import type { FieldError } from '../common/errors';
import { ValidationFailedError } from '../common/errors';
import { isScope, type AccessGrant, type CollectionAccess, type Scope } from './access-grant';
import { UnknownScopeError } from './auth.errors';

/** The limits a new key asks for, as sent: absent or null members are no limit. */
export interface GrantRequest {
  scopes?: readonly string[] | null;
  /** An object of patterns; a list of names is a publishable key's (publishable-key.ts). */
  collections?: Readonly<Record<string, unknown>> | readonly unknown[] | null;
  allowedIps?: readonly string[] | null;
}

export interface GrantBounds {
  /** Entries of `collections` at most (API_KEY_MAX_COLLECTIONS). */
  maxCollections: number;
  /** Entries of `allowedIps` at most (API_KEY_MAX_ALLOWED_IPS). */
  maxAllowedIps: number;
}

/**
 * A collection name (as collections are named, ^[A-Za-z][A-Za-z0-9_-]{0,63}$), or a prefix of one
 * followed by one `*` (`notes*`; `*` alone is every collection).
 */
export const COLLECTION_PATTERN =
  /^(?:[A-Za-z][A-Za-z0-9_-]{0,63}|(?:[A-Za-z][A-Za-z0-9_-]{0,63})?\*)$/;
export const COLLECTION_PATTERN_RULE =
  'a collection name (^[A-Za-z][A-Za-z0-9_-]{0,63}$), or a prefix of one with one trailing *';

const ACCESS: readonly CollectionAccess[] = ['read', 'write'];

/**
 * The grant a new key asks for, checked: scopes of the vocabulary (400 UNKNOWN_SCOPE naming the
 * others), collection patterns and access, and addresses or CIDRs (400 VALIDATION_FAILED). An
 * empty `scopes` is a key with no scope: it may call only the routes that need none.
 */
export function grantOfRequest(request: GrantRequest, bounds: GrantBounds): AccessGrant {
  const scopes = request.scopes ?? null;
  if (scopes !== null) {
    const unknown = scopes.filter((scope) => !isScope(scope));
    if (unknown.length > 0) throw new UnknownScopeError(unknown);
  }
  const errors: FieldError[] = [];
  const collections = checkCollections(request.collections ?? null, bounds, errors);
  const allowedIps = checkAddresses(request.allowedIps ?? null, bounds, errors);
  if (errors.length > 0) throw new ValidationFailedError(errors);
  return {
    scopes: scopes && ([...new Set(scopes)] as Scope[]),
    collections,
    allowedIps,
  };
}

function checkCollections(
  collections: Readonly<Record<string, unknown>> | readonly unknown[] | null,
  bounds: GrantBounds,
  errors: FieldError[],
): Record<string, CollectionAccess> | null {
  if (collections === null) return null;
  if (Array.isArray(collections)) {
    errors.push({
      field: 'collections',
      message:
        'must be an object of collection → "read" | "write" (a list is for a publishable key)',
    });
    return null;
  }
  const entries = Object.entries(collections);
  if (entries.length === 0)
    errors.push({ field: 'collections', message: 'must name at least one collection or pattern' });
  if (entries.length > bounds.maxCollections) {
    // Only the count: a problem naming every entry of an oversized map would be as large.
    errors.push({
      field: 'collections',
      message: `must have at most ${bounds.maxCollections} entries (API_KEY_MAX_COLLECTIONS)`,
    });
    return null;
  }
  const checked: Record<string, CollectionAccess> = {};
  for (const [pattern, access] of entries) {
    if (!COLLECTION_PATTERN.test(pattern))
      errors.push({
        field: `collections.${pattern}`,
        message: `must be ${COLLECTION_PATTERN_RULE}`,
      });
    if (typeof access !== 'string' || !ACCESS.includes(access as CollectionAccess))
      errors.push({ field: `collections.${pattern}`, message: 'must be "read" or "write"' });
    else checked[pattern] = access as CollectionAccess;
  }
  return checked;
}

function checkAddresses(
  allowedIps: readonly string[] | null,
  bounds: GrantBounds,
  errors: FieldError[],
): string[] | null {
  if (allowedIps === null) return null;
  if (allowedIps.length === 0 || allowedIps.length > bounds.maxAllowedIps) {
    errors.push({
      field: 'allowedIps',
      message: `must hold 1 to ${bounds.maxAllowedIps} addresses or CIDRs (API_KEY_MAX_ALLOWED_IPS)`,
    });
    return null;
  }
  allowedIps.forEach((range, i) => {
    if (!isAddressRange(range))
      errors.push({
        field: `allowedIps[${i}]`,
        message: 'must be an IPv4 or IPv6 address or CIDR (10.0.0.0/8, 2001:db8::/32)',
      });
  });
  return [...new Set(allowedIps)];
}

/** An IPv4 or IPv6 address, or one with a prefix length that fits it (`10.0.0.0/8`). */
export function isAddressRange(value: string): boolean {
  const slash = value.indexOf('/');
  const address = slash === -1 ? value : value.slice(0, slash);
  const family = isIP(address);
  if (family === 0) return false;
  if (slash === -1) return true;
  const bits = value.slice(slash + 1);
  if (!/^(?:0|[1-9][0-9]{0,2})$/.test(bits)) return false;
  return Number(bits) <= (family === 4 ? 32 : 128);
}
