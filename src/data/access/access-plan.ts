import type { Document } from 'mongodb';
import sift from 'sift';
import type { CustomerPrincipal } from '../../auth';
import { toMongoFilter, type MatchScope } from '../query/data-query';
import type { Condition } from '../query/filter-operators';
import {
  DEFAULT_ACCESS_RULES,
  readAccessRules,
  type AccessOperation,
  type AccessRulesRule,
  type CompiledAccessRules,
  type RuleTemplate,
} from './access-rules';

/**
 * The one enforcement point of access rules: what a request may read and write in one
 * collection, computed once per request from the principal, the collection's registry entry and
 * the request's owner field (`authField`). Every read path ANDs `read.filter` into its query;
 * every write judges the item before and after against its operation's scope; every output
 * leaves out `protectedFields`, and every filter, sort, projection, cursor or aggregate field
 * that names one is refused (protected-fields.ts).
 */

/** Who the rules speak of: root and team keys (not limited), sub keys, publishable keys. */
export type CallerClass = 'full' | 'sub' | 'public';

export interface ItemScope extends MatchScope {
  /** The MongoDB filter the operation is confined to; null: every item. */
  readonly filter: Document | null;
  /** No item can be in scope (`none`, or a caller constant the caller does not have). */
  readonly none: boolean;
  /** The same filter in memory, with MongoDB's semantics, on an item as stored (dates as dates). */
  matches(item: Record<string, unknown>): boolean;
}

export interface AccessPlan {
  readonly caller: CallerClass;
  readonly read: ItemScope;
  readonly create: ItemScope;
  readonly update: ItemScope;
  readonly delete: ItemScope;
  /** Field paths the caller never sees and may not name; empty for root and team keys. */
  readonly protectedFields: readonly string[];
  /** The read rule is `own`: the caller reads the items its account owns (the feed selects by owner). */
  readonly readByOwner: boolean;
}

/** The part of a registry entry the plan reads. */
export interface AccessTarget {
  rules: { access?: AccessRulesRule };
}

const EVERY_ITEM: ItemScope = Object.freeze({
  filter: null,
  none: false,
  matches: () => true,
});

/** Matches no item (FerretDB and MongoDB alike answer `$in: []` with nothing). */
const NO_ITEM: ItemScope = Object.freeze({
  filter: Object.freeze({ _id: { $in: [] } }),
  none: true,
  matches: () => false,
});

const FULL_PLAN: AccessPlan = Object.freeze({
  caller: 'full',
  read: EVERY_ITEM,
  create: EVERY_ITEM,
  update: EVERY_ITEM,
  delete: EVERY_ITEM,
  protectedFields: Object.freeze([]),
  readByOwner: false,
});

/** Stored rules are read with generous limits: they were checked against the limits of their PUT. */
const STORED_LIMITS = { maxConditions: 1_000, maxInValues: 10_000, maxProtectedFields: 1_000 };

const DEFAULT_COMPILED = readAccessRules(DEFAULT_ACCESS_RULES, STORED_LIMITS).compiled;

/** Rules compiled per text, shared by every request of every collection with the same rules. */
const COMPILED = new Map<string, CompiledAccessRules>();
const COMPILED_MAX = 1_000;

function compiledOf(target: AccessTarget | null): CompiledAccessRules {
  const text = target?.rules.access?.text;
  if (text === undefined) return DEFAULT_COMPILED;
  let compiled = COMPILED.get(text);
  if (!compiled) {
    compiled = readAccessRules(JSON.parse(text) as unknown, STORED_LIMITS).compiled;
    if (COMPILED.size >= COMPILED_MAX) COMPILED.delete(COMPILED.keys().next().value as string);
    COMPILED.set(text, compiled);
  }
  return compiled;
}

export function callerClassOf(principal: CustomerPrincipal): CallerClass {
  switch (principal.kind) {
    case 'root':
    case 'team':
      return 'full';
    case 'sub':
      return 'sub';
    case 'publishable':
      return 'public';
  }
}

/** The caller's constants; null for a caller without them (a publishable key). */
type CallerValues = Readonly<Record<string, string>> | null;

function callerValuesOf(principal: CustomerPrincipal): CallerValues {
  return principal.kind === 'sub'
    ? { '$caller.accountId': principal.accountId, '$caller.clientId': principal.clientId }
    : null;
}

function bindValue<T>(value: T, caller: Readonly<Record<string, string>>): T | string {
  return typeof value === 'string' && Object.hasOwn(caller, value)
    ? (caller[value] as string)
    : value;
}

function bindCondition(condition: Condition, caller: Readonly<Record<string, string>>): Condition {
  switch (condition.kind) {
    case 'eq':
      return { ...condition, anyOf: condition.anyOf.map((v) => bindValue(v, caller)) };
    case 'ne':
      return { ...condition, noneOf: condition.noneOf.map((v) => bindValue(v, caller)) };
    case 'range':
      return { ...condition, value: bindValue(condition.value, caller) };
    case 'prefix':
      return { ...condition, prefix: bindValue(condition.prefix, caller) };
    case 'exists':
      return condition;
  }
}

function scopeOf(filter: Document): ItemScope {
  let test: ((item: Record<string, unknown>) => boolean) | null = null;
  return {
    filter,
    none: false,
    matches: (item) => (test ??= sift<Record<string, unknown>>(filter))(item),
  };
}

function bindRule(rule: RuleTemplate, caller: CallerValues, ownerField: string): ItemScope {
  switch (rule.kind) {
    case 'all':
      return EVERY_ITEM;
    case 'none':
      return NO_ITEM;
    case 'own': {
      const account = caller?.['$caller.accountId'];
      return account === undefined ? NO_ITEM : scopeOf({ [ownerField]: account });
    }
    case 'filter': {
      if (!rule.usesCaller)
        return scopeOf(toMongoFilter({ scope: null, conditions: rule.conditions }));
      if (caller === null) return NO_ITEM;
      const conditions = rule.conditions.map((c) => bindCondition(c, caller));
      return scopeOf(toMongoFilter({ scope: null, conditions }));
    }
  }
}

/**
 * The access plan of one request: `target` is the collection's registry entry (null: the
 * collection does not exist yet, so its rules are the defaults), `ownerField` the request's
 * owner field.
 */
export function accessPlanOf(
  principal: CustomerPrincipal,
  target: AccessTarget | null,
  ownerField: string,
): AccessPlan {
  const caller = callerClassOf(principal);
  if (caller === 'full') return FULL_PLAN;
  const compiled = compiledOf(target);
  const values = callerValuesOf(principal);
  if (caller === 'public')
    return {
      caller,
      read: bindRule(compiled.public.read, values, ownerField),
      create: NO_ITEM,
      update: NO_ITEM,
      delete: NO_ITEM,
      protectedFields: compiled.protectedFields.public,
      readByOwner: false,
    };
  const bind = (operation: AccessOperation): ItemScope =>
    bindRule(compiled.sub[operation], values, ownerField);
  return {
    caller,
    read: bind('read'),
    create: bind('create'),
    update: bind('update'),
    delete: bind('delete'),
    protectedFields: compiled.protectedFields.sub,
    readByOwner: compiled.sub.read.kind === 'own',
  };
}
