import type { CustomerPrincipal } from '../auth';
import type { NamedPath } from './live-filter';

/**
 * What the feed needs of a collection's access rules (docs/data.md, "Access rules") to judge an
 * item event for a sub (or publishable) caller, answered by the module that owns the rules (it
 * registers ItemAccessSource, as it registers LiveFilterCompiler): the feed judges events
 * without knowing the rule language.
 */
export interface ItemReadAccess {
  /** Which rules these are (equal tags: the same rules). */
  readonly tag: string;
  /**
   * The read rule is `own` (the item's owner field holds the caller's account): judged by the
   * event's `owner`, as the database can; else by `readable` on the item, in memory.
   */
  readonly byOwner: boolean;
  /** Whether the item (as JSON, as events carry it) is inside the caller's read rule. */
  readable(item: Record<string, unknown>): boolean;
  /** The item without the caller's protected fields (the item itself when none). */
  strip(item: Record<string, unknown>): Record<string, unknown>;
  /** 400 PROTECTED_FIELD when one of these paths reaches a protected field (an oracle of it). */
  refuseProtected(named: readonly NamedPath[]): void;
}

export interface ItemAccessSource {
  /** The caller's read access to the items of `collection` in its namespace. */
  of(principal: CustomerPrincipal, collection: string): Promise<ItemReadAccess>;
  /**
   * The collections of the caller's namespace whose read rule can let it read items it does not
   * own (every rule but `own`): their item events are read from the feed and judged in memory.
   */
  widerThanOwn(principal: CustomerPrincipal): Promise<readonly string[]>;
}

/** Whether the rules limit what the principal reads of items (sub and publishable keys). */
export function limitedByRules(principal: CustomerPrincipal): boolean {
  return principal.kind !== 'root' && principal.kind !== 'team';
}
