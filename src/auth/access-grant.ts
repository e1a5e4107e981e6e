/**
 * What a credential may do, as one value any credential carries: an API key (fixed when it is
 * made), and later an access token whose scope claim maps onto the same scopes. A principal
 * without a grant, or a grant whose members are null, has every right its kind has (keys made
 * before grants existed, and keys made without limits).
 */

/** The scope vocabulary: one table in docs/keys.md, "Authentication"; `…:write` implies `…:read`. */
export const SCOPES = [
  'profile:read',
  'profile:write',
  'projects:read',
  'projects:write',
  'data:read',
  'data:write',
  'files:read',
  'files:write',
  'events:read',
  'keys:manage',
  'export',
  'import',
  'usage:read',
] as const;

export type Scope = (typeof SCOPES)[number];

/** What a key may do in the collections a pattern names: write implies read. */
export type CollectionAccess = 'read' | 'write';

export interface AccessGrant {
  /** The scopes held; null: all of them. */
  readonly scopes: readonly Scope[] | null;
  /**
   * Collections by name or by a pattern with one trailing `*` (`notes*`), with what may be done
   * in them; null: every collection. A collection no entry names is out of reach.
   */
  readonly collections: Readonly<Record<string, CollectionAccess>> | null;
  /** IPv4/IPv6 CIDRs (or single addresses) requests may come from; null: anywhere. */
  readonly allowedIps: readonly string[] | null;
}

/** A grant without limits: what every key made without `scopes`, `collections` or `allowedIps` has. */
export const FULL_GRANT: AccessGrant = Object.freeze({
  scopes: null,
  collections: null,
  allowedIps: null,
});

const SCOPE_SET: ReadonlySet<string> = new Set(SCOPES);

export function isScope(value: string): value is Scope {
  return SCOPE_SET.has(value);
}

/** The read scope a write scope implies (`data:write` → `data:read`); null for the others. */
function impliedRead(scope: Scope): Scope | null {
  if (!scope.endsWith(':write')) return null;
  const read = `${scope.slice(0, -':write'.length)}:read`;
  return isScope(read) ? read : null;
}

/** Whether the grant holds `scope`, itself or through the write scope that implies it. */
export function hasScope(grant: AccessGrant, scope: Scope): boolean {
  const { scopes } = grant;
  if (scopes === null) return true;
  for (const held of scopes) if (held === scope || impliedRead(held) === scope) return true;
  return false;
}

/** Every scope the grant holds, the reads its writes imply included, in SCOPES order. */
export function heldScopes(grant: AccessGrant): Scope[] {
  return SCOPES.filter((scope) => hasScope(grant, scope));
}

/** Whether `pattern` (a name, or a prefix with one trailing `*`) names `collection`. */
export function patternMatches(pattern: string, collection: string): boolean {
  return pattern.endsWith('*')
    ? collection.startsWith(pattern.slice(0, -1))
    : collection === pattern;
}

/** What the grant allows in `collection`: the most any matching entry gives; null: nothing. */
export function collectionAccess(grant: AccessGrant, collection: string): CollectionAccess | null {
  const { collections } = grant;
  if (collections === null) return 'write';
  let access: CollectionAccess | null = null;
  for (const [pattern, given] of Object.entries(collections)) {
    if (!patternMatches(pattern, collection)) continue;
    if (given === 'write') return 'write';
    access = 'read';
  }
  return access;
}

/** Whether the grant reaches `collection` for `need` (write implies read). */
export function allowsCollection(
  grant: AccessGrant,
  collection: string,
  need: CollectionAccess,
): boolean {
  const access = collectionAccess(grant, collection);
  return access === 'write' || (access === 'read' && need === 'read');
}

/**
 * What a key expiring at `wanted` would have beyond a caller expiring at `held` (null: never), in
 * words; null when it ends no later: a key never mints or rotates a key that outlives it.
 */
export function lifetimeEscalationOf(wanted: Date | null, held: Date | null): string | null {
  if (held === null || (wanted !== null && wanted <= held)) return null;
  return wanted === null ? 'no expiry' : `an expiry after ${held.toISOString()}`;
}

/**
 * What `wanted` asks beyond `held`, in words, or null when it asks nothing more: a key never
 * mints a key with more than it has (SCOPE_ESCALATION). A pattern is within the holder's when
 * every collection it can name is one the holder reaches as far (a holder's `notes*` covers
 * `notes-2025*` and `notes`, not `note*`). Addresses: a holder limited to addresses can mint
 * only keys limited to the same or fewer entries of its own list.
 */
export function escalationOf(wanted: AccessGrant, held: AccessGrant): string | null {
  if (held.scopes !== null) {
    if (wanted.scopes === null) return 'all scopes';
    const beyond = wanted.scopes.filter((scope) => !hasScope(held, scope));
    if (beyond.length > 0) return `the scopes ${beyond.join(', ')}`;
  }
  if (held.collections !== null) {
    if (wanted.collections === null) return 'every collection';
    for (const [pattern, given] of Object.entries(wanted.collections)) {
      if (!patternWithin(pattern, given, held.collections))
        return `${given} access to collections named ${JSON.stringify(pattern)}`;
    }
  }
  if (held.allowedIps !== null) {
    if (wanted.allowedIps === null) return 'requests from any address';
    const outside = wanted.allowedIps.filter((range) => !held.allowedIps?.includes(range));
    if (outside.length > 0) return `requests from ${outside.join(', ')}`;
  }
  return null;
}

function patternWithin(
  pattern: string,
  given: CollectionAccess,
  held: Readonly<Record<string, CollectionAccess>>,
): boolean {
  const wide = pattern.endsWith('*');
  const stem = wide ? pattern.slice(0, -1) : pattern;
  return Object.entries(held).some(([own, access]) => {
    if (given === 'write' && access !== 'write') return false;
    if (own.endsWith('*')) return stem.startsWith(own.slice(0, -1));
    return !wide && own === stem;
  });
}
