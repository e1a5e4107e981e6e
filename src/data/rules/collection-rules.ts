import { DEFAULT_ACCESS_RULES, type AccessRulesRule } from '../access/access-rules';
import type { SearchRule } from '../search/search-rule';
/**
 * A collection's rules, kept on its registry entry (so every instance reads them with the entry,
 * and sees a change within REGISTRY_CACHE_MS): the JSON Schema its items follow, when they
 * expire, and who of the sub and publishable keys may read and write them. None ever rewrites
 * stored items.
 */

/** What a write that breaks the schema gets: refused (422), or written with a warning header. */
export const SCHEMA_ACTIONS = ['error', 'warn'] as const;
export type SchemaAction = (typeof SCHEMA_ACTIONS)[number];

export interface SchemaRule {
  /**
   * The schema as the client sent it, as JSON text: a schema's own keys (`$ref`, `$defs`, keys
   * with dots) are not all storable as MongoDB field names.
   */
  text: string;
  action: SchemaAction;
  changedAt: Date;
}

export interface ExpiryRule {
  /** `_createdAt`, `_updatedAt`, or a field holding an RFC 3339 time. */
  field: string;
  afterSeconds: number;
  changedAt: Date;
}

export interface CollectionRules {
  schema?: SchemaRule;
  expiry?: ExpiryRule;
  /** Who of the sub and publishable keys reads and writes what (src/data/access/access-rules.ts). */
  access?: AccessRulesRule;
  /** The fields full-text search reads, and how far the build of their word lists is (src/data/search). */
  search?: SearchRule;
}

/** The default access rules as a new registry entry has them written out (set now). */
export function defaultAccessRule(): AccessRulesRule {
  return { text: JSON.stringify(DEFAULT_ACCESS_RULES), changedAt: new Date() };
}

/** A change of rules: a rule given is set, `null` removes it, absent leaves it as it is. */
export type RulesChange = { [K in keyof CollectionRules]?: CollectionRules[K] | null };

/** The update of a registry entry that makes a RulesChange. */
export function rulesUpdate(change: RulesChange): {
  $set?: Record<string, unknown>;
  $unset?: Record<string, 1>;
} {
  const set: Record<string, unknown> = {};
  const unset: Record<string, 1> = {};
  for (const [rule, value] of Object.entries(change)) {
    if (value === null) unset[`rules.${rule}`] = 1;
    else if (value !== undefined) set[`rules.${rule}`] = value;
  }
  return {
    ...(Object.keys(set).length > 0 ? { $set: set } : {}),
    ...(Object.keys(unset).length > 0 ? { $unset: unset } : {}),
  };
}
