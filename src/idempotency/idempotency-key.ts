import type { Tenant } from '../common/tenancy/namespace';
import { createHash, hkdfSync } from 'node:crypto';
import { InvalidIdempotencyKeyError } from './idempotency.errors';

/**
 * What identifies an idempotent request: the header's rules, which operations take it, the
 * record id a key maps to and the fingerprint a repeat must match. Pure functions, so the rules
 * are unit-tested on their own.
 */

export const IDEMPOTENCY_KEY_HEADER = 'Idempotency-Key';
export const IDEMPOTENT_REPLAYED_HEADER = 'Idempotent-Replayed';

/** Longest key, counted without the quotes of the structured-field form. */
export const IDEMPOTENCY_KEY_MAX_LENGTH = 255;

/**
 * What parseIdempotencyKey accepts, as one regular expression for the OpenAPI document (a unit
 * test holds the two together).
 */
export const IDEMPOTENCY_KEY_PATTERN = `^(?:[!#-\\[\\]-~]{1,${IDEMPOTENCY_KEY_MAX_LENGTH}}|"[ !#-\\[\\]-~]{1,${IDEMPOTENCY_KEY_MAX_LENGTH}}")$`;

/** A bare key: visible ASCII without `"` and `\` (so two keys joined by `, ` never pass). */
const BARE_KEY = /^[\x21\x23-\x5b\x5d-\x7e]+$/;
/** An RFC 8941 string without escapes, the form draft-ietf-httpapi-idempotency-key-header uses. */
const QUOTED_KEY = /^"([\x20\x21\x23-\x5b\x5d-\x7e]+)"$/;

/**
 * The key a request sends: `Idempotency-Key: 8e03978e-40d5-43e8-bc93-6894a57f9324`, or the same
 * quoted (`"8e03…"`, the same key). 400 for an empty or overlong key, or one with characters
 * outside visible ASCII; a header sent twice arrives joined by `, ` and fails that rule too.
 */
export function parseIdempotencyKey(value: string | string[]): string {
  if (Array.isArray(value)) {
    throw new InvalidIdempotencyKeyError(`Send ${IDEMPOTENCY_KEY_HEADER} once.`);
  }
  const key = QUOTED_KEY.exec(value)?.[1] ?? (BARE_KEY.test(value) ? value : null);
  if (key === null) {
    throw new InvalidIdempotencyKeyError(
      `${IDEMPOTENCY_KEY_HEADER} must be 1-${IDEMPOTENCY_KEY_MAX_LENGTH} visible ASCII characters without " and \\ (a UUID is a good key), optionally in double quotes.`,
    );
  }
  if (key.length > IDEMPOTENCY_KEY_MAX_LENGTH) {
    throw new InvalidIdempotencyKeyError(
      `${IDEMPOTENCY_KEY_HEADER} is ${key.length} characters long; at most ${IDEMPOTENCY_KEY_MAX_LENGTH} are allowed.`,
    );
  }
  return key;
}

/** PUT and DELETE operations that take a key (as OpenAPI paths); every POST takes one. A multi-item write is kept like any other: its retry answers the first counts. */
const KEYED_UPDATES: ReadonlySet<string> = new Set([
  '/project/{projectId}',
  '/data/{collection}/{indexName}/{indexValue}',
  '/data/{collection}',
]);

/** PATCH operations that take a key: array operations, which a repeat would apply twice. */
const KEYED_PATCHES: ReadonlySet<string> = new Set(['/data/{collection}/{indexName}/{indexValue}']);

/**
 * POSTs that refuse a key (400): an import streams its body and its answer, which cannot be kept
 * whole; repeated with mode=upsert, it writes the same items again.
 */
export const UNKEYED_POSTS: ReadonlySet<string> = new Set(['/import']);

/**
 * Whether an operation takes Idempotency-Key: every POST but UNKEYED_POSTS, PUT and DELETE of
 * projects and data items, and PATCH (array operations) of data items. The OpenAPI document and
 * the guard both ask this, so they cannot disagree. Other operations ignore the header:
 * they are reads, or writes that a repeat leaves as they were.
 */
export function takesIdempotencyKey(method: string, path: string): boolean {
  const verb = method.toUpperCase();
  if (verb === 'POST') return !UNKEYED_POSTS.has(path);
  if (verb === 'PATCH') return KEYED_PATCHES.has(path);
  return (verb === 'PUT' || verb === 'DELETE') && KEYED_UPDATES.has(path);
}

/** An Express route path (`/project/:projectId`) as an OpenAPI path (`/project/{projectId}`). */
export function openApiPath(routePath: string): string {
  return routePath.replace(/:([A-Za-z0-9_]+)/g, '{$1}');
}

/**
 * Whose keys a request's key is among: the principal (a user, a sub profile, a team or the
 * operator; not one API key, so a retry with a rotated key is still recognised) and the branch.
 * Keys of two scopes never meet.
 */
export interface IdempotencyScope {
  principal: string;
  branch: string;
  /** The tenant whose records they are (null: the operator's). Not part of the record's id. */
  tenant: Tenant | null;
}

/** What a key's record and seal are derived from: who holds the key, in which branch. */
type KeyOwner = Pick<IdempotencyScope, 'principal' | 'branch'>;

/** The record of a key: a SHA-256 over the scope and the key, so the key is never stored. */
export function recordIdOf(scope: KeyOwner, key: string): string {
  return createHash('sha256')
    .update(JSON.stringify(['idempotency-record', scope.principal, scope.branch, key]))
    .digest('hex');
}

/**
 * The key that seals a stored response: derived from the Idempotency-Key, which only the client
 * knows, so what the collection holds (a new API key's secret, say) cannot be read without it.
 */
export function responseKeyOf(scope: KeyOwner, key: string): Buffer {
  return Buffer.from(
    hkdfSync(
      'sha256',
      key,
      JSON.stringify([scope.principal, scope.branch]),
      'idempotent-response',
      32,
    ),
  );
}

/** The parts of a request that make it the same request. */
export interface RequestParts {
  method: string;
  /** Without the query string. */
  path: string;
  query: unknown;
  /** If-Match: a write under another precondition is another request. */
  ifMatch: string | string[] | undefined;
  /** The parsed JSON body (undefined without one). */
  body: unknown;
}

/**
 * A hash of what a repeat must send again: method, path, query, If-Match and body (as parsed, so
 * Content-Encoding and whitespace do not matter; member order does). Headers such as X-Branch
 * are part of the scope instead.
 */
export function fingerprintOf(parts: RequestParts): string {
  return createHash('sha256')
    .update(
      JSON.stringify([
        parts.method.toUpperCase(),
        parts.path,
        parts.query ?? null,
        parts.ifMatch ?? null,
        parts.body ?? null,
      ]),
    )
    .digest('hex');
}
