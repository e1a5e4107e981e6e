import { ValidationFailedError, type FieldError } from '../../common/errors';
import { isPlainObject } from '../../common/json';
import { bodyFilterConditions } from '../query/body-filters';
import { MANAGED_FIELDS } from '../query/data.constants';
import type { Condition, FilterLimits } from '../query/filter-operators';
import { fieldPathProblem } from '../query/json-guard';

/**
 * A collection's access rules (docs/data.md, "Access rules"): what sub keys and publishable keys
 * may read and write, and which fields they never see. Root and team keys are not limited by
 * them. Kept on the registry entry with the other collection rules, as the JSON the client sent
 * (normalised), so every instance reads them with the entry.
 */

/**
 * One operation's rule: `own` (the item's owner field holds the caller's account), `all`,
 * `none`, or a filter in the body-filter language whose values may be the caller's constants.
 */
export type AccessRule = 'own' | 'all' | 'none' | { filter: Record<string, unknown> };

export interface AccessRulesDocument {
  sub: { read: AccessRule; create: AccessRule; update: AccessRule; delete: AccessRule };
  public: { read: AccessRule };
  protectedFields: { sub: string[]; public: string[] };
}

/** As kept on the registry entry: the normalised document as JSON text, and when it was set. */
export interface AccessRulesRule {
  text: string;
  changedAt: Date;
}

/** Today's behaviour, and what a collection without rules has: a sub key its own items, the public nothing. */
export const DEFAULT_ACCESS_RULES: AccessRulesDocument = Object.freeze({
  sub: { read: 'own', create: 'own', update: 'own', delete: 'own' },
  public: { read: 'none' },
  protectedFields: { sub: [], public: [] },
}) as AccessRulesDocument;

/** The caller's constants a rule's filter may name as values. */
export const CALLER_CONSTANTS = ['$caller.accountId', '$caller.clientId'] as const;
export type CallerConstant = (typeof CALLER_CONSTANTS)[number];

/** The limits a PUT of rules is read under: the filter limits and ACCESS_MAX_PROTECTED_FIELDS. */
export interface AccessRulesLimits extends FilterLimits {
  maxProtectedFields: number;
}

export const SUB_OPERATIONS = ['read', 'create', 'update', 'delete'] as const;
export type AccessOperation = (typeof SUB_OPERATIONS)[number];

/** A rule as compiled once per rules text: the caller's constants are bound per request. */
export type RuleTemplate =
  | { kind: 'own' }
  | { kind: 'all' }
  | { kind: 'none' }
  | { kind: 'filter'; conditions: Condition[]; usesCaller: boolean };

export interface CompiledAccessRules {
  sub: Record<AccessOperation, RuleTemplate>;
  public: { read: RuleTemplate };
  protectedFields: { sub: readonly string[]; public: readonly string[] };
}

function isCallerConstant(value: unknown): value is CallerConstant {
  return typeof value === 'string' && (CALLER_CONSTANTS as readonly string[]).includes(value);
}

/** Every string value of a condition (what a caller constant can be). */
function conditionStrings(condition: Condition): unknown[] {
  switch (condition.kind) {
    case 'eq':
      return condition.anyOf;
    case 'ne':
      return condition.noneOf;
    case 'range':
      return [condition.value];
    case 'prefix':
      return [condition.prefix];
    case 'exists':
      return [];
  }
}

/** Reads one rule (`field` names it in errors); pushes what is wrong to `errors`. */
function readRule(
  value: unknown,
  field: string,
  limits: FilterLimits,
  errors: FieldError[],
): RuleTemplate | null {
  if (value === 'own' || value === 'all' || value === 'none') return { kind: value };
  if (!isPlainObject(value) || !isPlainObject(value.filter) || Object.keys(value).length !== 1) {
    errors.push({
      field,
      message: 'must be "own", "all", "none" or {"filter": {...}} (a body filter)',
    });
    return null;
  }
  let conditions: Condition[];
  try {
    conditions = bodyFilterConditions(value.filter, `${field}.filter`, limits);
  } catch (error) {
    if (error instanceof ValidationFailedError) {
      errors.push(...(error.errors as FieldError[]));
      return null;
    }
    throw error;
  }
  if (conditions.length === 0) {
    errors.push({
      field: `${field}.filter`,
      message: 'must have at least one condition; use "all"',
    });
    return null;
  }
  let usesCaller = false;
  for (const condition of conditions)
    for (const operand of conditionStrings(condition)) {
      if (isCallerConstant(operand)) usesCaller = true;
      else if (typeof operand === 'string' && operand.startsWith('$caller.'))
        errors.push({
          field: `${field}.filter.${condition.path}`,
          message: `'${operand}' is not a caller constant: ${CALLER_CONSTANTS.join(', ')}`,
        });
    }
  return { kind: 'filter', conditions, usesCaller };
}

function readProtectedFields(
  value: unknown,
  field: string,
  max: number,
  errors: FieldError[],
): string[] {
  if (value === undefined) return [];
  if (!Array.isArray(value)) {
    errors.push({ field, message: 'must be an array of field paths' });
    return [];
  }
  if (value.length > max)
    errors.push({
      field,
      message: `must have at most ${max} entries (ACCESS_MAX_PROTECTED_FIELDS)`,
    });
  const paths: string[] = [];
  value.forEach((path, at) => {
    const problem = typeof path === 'string' ? fieldPathProblem(path) : 'must be a string';
    const first = typeof path === 'string' ? (path.split('.')[0] ?? '') : '';
    if (problem) errors.push({ field: `${field}[${at}]`, message: problem });
    else if (MANAGED_FIELDS.has(first))
      errors.push({
        field: `${field}[${at}]`,
        message: 'must be a field of the client, not _id or a timestamp',
      });
    else if (!paths.includes(path as string)) paths.push(path as string);
  });
  return paths;
}

function readMembers(
  value: unknown,
  field: string,
  allowed: readonly string[],
  errors: FieldError[],
): Record<string, unknown> {
  if (value === undefined) return {};
  if (!isPlainObject(value)) {
    errors.push({ field, message: 'must be an object' });
    return {};
  }
  for (const key of Object.keys(value))
    if (!allowed.includes(key))
      errors.push({ field: `${field}.${key}`, message: `is not one of ${allowed.join(', ')}` });
  return value;
}

/** A member left out takes the default; `null` is kept, to be refused as no rule. */
function orDefault(value: unknown, fallback: AccessRule): AccessRule {
  return (value === undefined ? fallback : value) as AccessRule;
}

/**
 * Reads a PUT body (members left out take the default: sub `own`, public `none`, no protected
 * fields) into the normalised document and its compiled form; 400 VALIDATION_FAILED naming
 * every member that is wrong.
 */
export function readAccessRules(
  body: unknown,
  limits: AccessRulesLimits,
): { document: AccessRulesDocument; compiled: CompiledAccessRules } {
  const errors: FieldError[] = [];
  // Explicit null is a value (and not rules), as anywhere else: only a missing body is empty.
  const top = readMembers(body, 'body', ['sub', 'public', 'protectedFields'], errors);
  const sub = readMembers(top.sub, 'sub', SUB_OPERATIONS, errors);
  const pub = readMembers(top.public, 'public', ['read'], errors);
  const hidden = readMembers(top.protectedFields, 'protectedFields', ['sub', 'public'], errors);
  const document: AccessRulesDocument = {
    sub: {
      read: orDefault(sub.read, DEFAULT_ACCESS_RULES.sub.read),
      create: orDefault(sub.create, DEFAULT_ACCESS_RULES.sub.create),
      update: orDefault(sub.update, DEFAULT_ACCESS_RULES.sub.update),
      delete: orDefault(sub.delete, DEFAULT_ACCESS_RULES.sub.delete),
    },
    public: { read: orDefault(pub.read, DEFAULT_ACCESS_RULES.public.read) },
    protectedFields: {
      sub: readProtectedFields(
        hidden.sub,
        'protectedFields.sub',
        limits.maxProtectedFields,
        errors,
      ),
      public: readProtectedFields(
        hidden.public,
        'protectedFields.public',
        limits.maxProtectedFields,
        errors,
      ),
    },
  };
  const compiledSub = {} as Record<AccessOperation, RuleTemplate>;
  for (const operation of SUB_OPERATIONS)
    compiledSub[operation] = readRule(
      document.sub[operation],
      `sub.${operation}`,
      limits,
      errors,
    ) ?? {
      kind: 'none',
    };
  const publicRead = readRule(document.public.read, 'public.read', limits, errors) ?? {
    kind: 'none',
  };
  if (publicRead.kind === 'own')
    errors.push({
      field: 'public.read',
      message: 'cannot be "own": a publishable key has no account; use "all", "none" or a filter',
    });
  if (errors.length > 0) throw new ValidationFailedError(errors);
  return {
    document,
    compiled: {
      sub: compiledSub,
      public: { read: publicRead },
      protectedFields: document.protectedFields,
    },
  };
}

/** The rules as an ETag: the same rules, the same tag on every instance. */
export function accessRulesTag(text: string | null): string {
  let hash = 0x811c9dc5;
  const source = text ?? 'default';
  for (let i = 0; i < source.length; i += 1) {
    hash ^= source.charCodeAt(i);
    hash = Math.imul(hash, 0x01000193) >>> 0;
  }
  return `"access-${hash.toString(16).padStart(8, '0')}-${source.length}"`;
}

/**
 * Every path the rules protect from sub or publishable callers (a search field may be none of
 * them); none without rules. `rules` is a document, or the stored text of one.
 */
export function everyProtectedPath(
  rules: AccessRulesDocument | string | null | undefined,
): string[] {
  if (!rules) return [];
  const { protectedFields } = (
    typeof rules === 'string' ? JSON.parse(rules) : rules
  ) as AccessRulesDocument;
  return [...protectedFields.sub, ...protectedFields.public];
}
