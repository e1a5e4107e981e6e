import type { Document, Filter } from 'mongodb';
import { ValidationFailedError } from '../../common/errors';
import { coerceQueryValue, type Condition } from './filter-operators';
import { fieldPathProblem } from './json-guard';
import { cursorFilter, type ListPlan } from './list-plan';
import { wordsClauses } from '../search/words-filter';
import type { QueryWords } from '../search/tokenizer';

/**
 * Server-built query parts. Client input reaches MongoDB only as field paths that passed the
 * guard and as values placed by this module; operators are always the server's.
 */

/** Confines a sub caller to the items whose owner field holds its owner value. */
export interface OwnerScope {
  field: string;
  value: string;
}

/** What a match is confined to: the caller's access (src/data/access/access-plan.ts `ItemScope`). */
export interface MatchScope {
  /** The MongoDB filter; null: every item. */
  readonly filter: Document | null;
}

/** An owner scope as a match scope: the items whose owner field holds the value. */
export function ownerMatchScope(scope: OwnerScope | null): MatchScope | null {
  return scope ? { filter: { [scope.field]: scope.value } } : null;
}

export interface ItemMatch {
  /**
   * The filter the caller's access is confined to (src/data/access/access-plan.ts: the access
   * rule of the operation); null: every item.
   */
  scope: MatchScope | null;
  conditions: Condition[];
  /** A write under If-Match: the revisions it accepts (item-revision.ts builds it). */
  revision?: Document;
  /** A read with `q`: the words every item's word list must hold (src/data/search/search-query.ts). */
  words?: QueryWords;
}

/** What the filters run against: documents with a string `_id`. */
export type ItemDocument = Document & { _id: string };
type ItemFilter = Filter<ItemDocument>;

/** The `{indexName}/{indexValue}` part of an item route. */
export function pathCondition(indexName: string, indexValue: string): Condition {
  if (indexName === '_id') return { kind: 'eq', path: '_id', anyOf: [indexValue] };
  const problem = fieldPathProblem(indexName);
  if (problem)
    throw new ValidationFailedError([{ field: 'indexName', message: `field path ${problem}` }]);
  return { kind: 'eq', path: indexName, anyOf: coerceQueryValue(indexValue) };
}

const REGEX_SPECIAL = /[\\^$.*+?()[\]{}|/-]/g;

/** A prefix as an anchored pattern with every character literal: MongoDB serves it from an index. */
function prefixPattern(prefix: string): string {
  return `^${prefix.replace(REGEX_SPECIAL, '\\$&')}`;
}

function conditionFilter(condition: Condition): ItemFilter {
  switch (condition.kind) {
    case 'exists':
      return { [condition.path]: { $exists: condition.exists } };
    case 'ne':
      return { [condition.path]: { $nin: condition.noneOf } };
    case 'range':
      return { [condition.path]: { [`$${condition.op}`]: condition.value } };
    case 'prefix':
      return { [condition.path]: { $regex: prefixPattern(condition.prefix) } };
    case 'eq': {
      const { path, anyOf } = condition;
      // A null in a query means "the field holds null", not "the field is missing".
      const nullable = anyOf.includes(null);
      if (anyOf.length === 1 && !nullable) return { [path]: anyOf[0] };
      return { [path]: nullable ? { $in: anyOf, $exists: true } : { $in: anyOf } };
    }
  }
}

/**
 * The MongoDB filter of a match (and of a list plan's cursors); the owner scope, the client's
 * conditions, the search words and the cursors are `$and`-ed.
 */
export function toMongoFilter(match: ItemMatch, plan?: ListPlan): ItemFilter {
  const clauses: ItemFilter[] = [];
  if (match.scope?.filter) clauses.push(match.scope.filter);
  for (const condition of match.conditions) clauses.push(conditionFilter(condition));
  if (match.words) clauses.push(...(wordsClauses(match.words) as ItemFilter[]));
  if (match.revision) clauses.push(match.revision);
  if (plan?.after) clauses.push(cursorFilter(plan, 'after', plan.after));
  if (plan?.before) clauses.push(cursorFilter(plan, 'before', plan.before));
  if (clauses.length === 0) return {};
  if (clauses.length === 1) return clauses[0] as ItemFilter;
  return { $and: clauses };
}
