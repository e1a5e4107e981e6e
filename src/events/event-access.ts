import type { CustomerPrincipal } from '../auth';
import type { FeedEvent } from './event-scope';
import { imageBefore } from './item-images';
import type { NamedPath } from './live-filter';
import { limitedByRules, type ItemAccessSource, type ItemReadAccess } from './item-access';

/** Read rules a stream remembers per collection (rules change seldom; the oldest goes first). */
const RULES_REMEMBERED = 4;

/**
 * How one reader of the feed (a page, a long poll, a stream) judges item events by the access
 * rules of their collections (docs/events.md, "Who sees what"). A sub key's events are
 * pre-selected by the database (`widerThanOwn`: collections whose read rule is `own` by the
 * event's owner, the others by collection) and judged here, in memory, by each collection's
 * read rule; protected fields leave every item image it hands out. `prepare` (re)loads the rules
 * of the collections of the events about to be judged: a reader sees a changed rule within
 * REGISTRY_CACHE_MS, the registry cache's bound. A stream remembers the read rules it judged by,
 * so an item it may have sent under an earlier rule counts as readable before a change (its
 * `left` after a tightening).
 */
export class EventAccess {
  private readonly rules = new Map<string, ItemReadAccess[]>();
  private widerCollections: readonly string[] = [];

  constructor(
    private readonly principal: CustomerPrincipal,
    private readonly source: ItemAccessSource | null,
    /** The one collection the reader follows (undefined: all of them). */
    private readonly collection?: string,
  ) {}

  /** The collections whose item events the database selects by collection, not by owner. */
  get wider(): readonly string[] {
    return this.widerCollections;
  }

  /** Loads which collections are judged in memory (before a read of the feed). */
  async prepareRead(): Promise<void> {
    if (!this.source) return;
    if (this.collection !== undefined) {
      const access = await this.load(this.collection);
      this.widerCollections = access.byOwner ? [] : [this.collection];
      return;
    }
    this.widerCollections = await this.source.widerThanOwn(this.principal);
  }

  /** 400 PROTECTED_FIELD when a path a live query names reaches a protected field of `collection`. */
  async refuseProtected(collection: string, named: readonly NamedPath[]): Promise<void> {
    if (!this.source) return;
    (await this.load(collection)).refuseProtected(named);
  }

  /** Loads the rules of the collections of these events (before they are judged). */
  async prepare(events: readonly FeedEvent[]): Promise<void> {
    if (!this.source) return;
    const names = new Set<string>();
    for (const event of events)
      if (event.resource === 'item' && event.collection !== undefined) names.add(event.collection);
    await Promise.all([...names].map((name) => this.load(name)));
  }

  private async load(collection: string): Promise<ItemReadAccess> {
    const access = await (this.source as ItemAccessSource).of(this.principal, collection);
    const known = this.rules.get(collection) ?? [];
    if (known[0]?.tag !== access.tag) {
      const history = [access, ...known.filter((old) => old.tag !== access.tag)];
      this.rules.set(collection, history.slice(0, RULES_REMEMBERED));
    }
    return access;
  }

  /** The rules of the event's collection: the current one first (none loaded: own, nothing hidden). */
  private rulesOf(event: FeedEvent): readonly ItemReadAccess[] {
    return (event.collection !== undefined ? this.rules.get(event.collection) : undefined) ?? [];
  }

  private owns(owner: string | null): boolean {
    return this.principal.kind === 'sub' && owner === this.principal.accountId;
  }

  private readsBy(
    access: ItemReadAccess | undefined,
    owner: string | null,
    item: unknown,
  ): boolean {
    if (!access || access.byOwner) return this.owns(owner);
    return item !== null && item !== undefined && access.readable(item as Record<string, unknown>);
  }

  /** Whether the caller may read the item after the event (none after a deletion). */
  readsAfter(event: FeedEvent): boolean {
    if (event.type === 'deleted') return false;
    return this.readsBy(this.rulesOf(event)[0], event.owner, event.data);
  }

  /**
   * Whether the caller could read the item before the event, under the current rule or one it
   * judged by earlier (none before a creation; unknown without the event's prior: not counted,
   * except by owner).
   */
  readsBefore(event: FeedEvent): boolean {
    if (event.type === 'created') return false;
    const owner =
      event.type === 'updated' && event.formerOwner !== undefined ? event.formerOwner : event.owner;
    const image =
      event.prior === undefined
        ? null
        : imageBefore(event.type === 'deleted' ? null : event.data, event.prior);
    const rules = this.rulesOf(event);
    if (rules.length === 0) return this.readsBy(undefined, owner, image);
    return rules.some((access) => this.readsBy(access, owner, image));
  }

  /** An item image without the protected fields of its collection's current rule. */
  strip(event: FeedEvent, item: Record<string, unknown>): Record<string, unknown> {
    const access = this.rulesOf(event)[0];
    return access ? access.strip(item) : item;
  }

  /**
   * A feed page's view of an item event (not a live query's): `own` collections as the database
   * selected them (the item's owner after the change is the caller); the others when the rule
   * reads the item after the change or — a deletion, an update that took it out — before, then
   * without data. Null: not seen.
   */
  pageView(event: FeedEvent): { data: Record<string, unknown> | null } | null {
    const access = this.rulesOf(event)[0];
    if (!access || access.byOwner) {
      if (!this.owns(event.owner)) return null;
      return { data: event.data === null ? null : this.strip(event, event.data) };
    }
    const after = this.readsAfter(event);
    if (!after && !this.readsBefore(event)) return null;
    return { data: after && event.data !== null ? access.strip(event.data) : null };
  }
}

/** The access of a reader (null: a root or team key, which the rules do not limit). */
export function eventAccessOf(
  principal: CustomerPrincipal,
  source: ItemAccessSource | null,
  collection?: string,
): EventAccess | null {
  return limitedByRules(principal) ? new EventAccess(principal, source, collection) : null;
}
