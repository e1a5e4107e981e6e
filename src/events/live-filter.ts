/**
 * An item filter and projection compiled from a feed request's `filter[…]` and `fields`
 * parameters, by the module that owns the data's query language (it registers the compiler:
 * LiveFilterCompiler), so the feed evaluates it without knowing that language.
 */
export interface LiveFilter {
  /** Whether the item (as JSON, as events carry it) matches, with the database's semantics. */
  matches(item: Record<string, unknown>): boolean;
  /** The field paths it names, each with the parameter that names it (`filter[a.b]`, `fields`). */
  readonly named: readonly NamedPath[];
  /** The item as a matching event carries it (`fields=`). */
  project(item: Record<string, unknown>): Record<string, unknown>;
}

/** A field path a request names, and the request member that names it. */
export interface NamedPath {
  field: string;
  path: string;
}

/** Reads `filter[…]` and `fields` parameters (→ 400 when wrong) into a LiveFilter. */
export type LiveFilterCompiler = (params: Record<string, unknown>) => LiveFilter;
