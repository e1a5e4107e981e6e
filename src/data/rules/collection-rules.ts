/**
 * A collection's rules, kept on its registry entry (so every instance reads them with the entry,
 * and sees a change within REGISTRY_CACHE_MS): the JSON Schema its items follow and when they
 * expire. Neither ever rewrites stored items.
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
}

/** A change of rules: a rule given is set, `null` removes it, absent leaves it as it is. */
export type RulesChange = { [K in keyof CollectionRules]?: CollectionRules[K] | null };
