import { readFilter } from './json-guard';
import { isPlainObject, isScalar } from '../../common/json';
import {
  ConditionReader,
  isOperator,
  unknownOperator,
  type Condition,
  type FilterLimits,
} from './filter-operators';

// The filters of request bodies (`{"f": value}` or `{"f": {"<op>": value}}`), read under the same
// rules and budgets as query-string filters (filter-operators.ts).

/** One operator of a body filter: `{"f": {"<op>": value}}`. */
function readBodyOperator(
  reader: ConditionReader,
  path: string,
  op: string,
  value: unknown,
  field: string,
): void {
  if (!isOperator(op)) {
    reader.fail(field, unknownOperator(op));
    return;
  }
  if (op === 'in' || op === 'nin') {
    if (!Array.isArray(value) || !value.every(isScalar)) {
      reader.fail(field, 'must be an array of strings, numbers, booleans or nulls');
      return;
    }
    if (!reader.listSize(value.length, field)) return;
    const anyOf = reader.equalValues(path, value, field);
    if (anyOf)
      reader.add(op === 'in' ? { kind: 'eq', path, anyOf } : { kind: 'ne', path, noneOf: anyOf });
  } else if (op === 'eq' || op === 'ne') {
    if (!isScalar(value)) {
      reader.fail(field, 'must be a string, number, boolean or null');
      return;
    }
    const anyOf = reader.equalValues(path, [value], field);
    if (anyOf)
      reader.add(op === 'eq' ? { kind: 'eq', path, anyOf } : { kind: 'ne', path, noneOf: anyOf });
  } else if (op === 'exists') {
    if (typeof value === 'boolean') reader.add({ kind: 'exists', path, exists: value });
    else reader.fail(field, 'must be true or false');
  } else if (op === 'prefix') {
    reader.prefix(path, value, field);
  } else if (typeof value === 'number' || typeof value === 'string') {
    reader.range(path, op, value, field);
  } else {
    reader.fail(field, 'must be a number or a string');
  }
}

/**
 * Conditions of a body `filter` (PUT and DELETE): `{"f": v}` is equality with the value as
 * typed; `{"f": {"gte": 10, "lt": 20}}` applies operators. Absent or null: no conditions.
 */
export function bodyFilterConditions(
  filter: unknown,
  field: string,
  limits: FilterLimits,
): Condition[] {
  if (filter === undefined || filter === null) return [];
  const guarded = readFilter(filter, field);
  const reader = new ConditionReader(limits);
  for (const [path, value] of Object.entries(guarded)) {
    const at = `${field}.${path}`;
    if (isScalar(value)) {
      const anyOf = reader.equalValues(path, [value], at);
      if (anyOf) reader.add({ kind: 'eq', path, anyOf });
    } else if (isPlainObject(value) && Object.keys(value).length > 0) {
      for (const [op, operand] of Object.entries(value))
        readBodyOperator(reader, path, op, operand, `${at}.${op}`);
    } else {
      reader.fail(
        at,
        'must be a string, number, boolean or null (equality), or an object of operators such as {"gte": 10}',
      );
    }
  }
  return reader.finish(field);
}
