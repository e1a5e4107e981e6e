import { ValidationFailedError, type FieldError } from '../../common/errors';
import type { CreateDataIndexDto } from '../indexes/dto/data-index.dto';
import { MAX_INDEX_FIELDS } from './data.constants';
import { guardFieldPath } from './json-guard';
import { isPlainObject } from '../../common/json';

export interface IndexRequest {
  name: string;
  fields: Record<string, 1 | -1>;
  unique: boolean;
  /** Whether the client chose the name (an unnamed index matches any index on the same fields). */
  named: boolean;
}

/** `{field, sort?}` or `{fields}` as one ordered key spec, named like MongoDB names it. */
export function toIndexRequest(body: CreateDataIndexDto): IndexRequest {
  const fields = indexFields(body);
  const name =
    body.name ??
    Object.entries(fields)
      .map(([f, d]) => `${f}_${d}`)
      .join('_');
  return { name, fields, unique: body.unique === true, named: body.name !== undefined };
}

function indexFields(body: CreateDataIndexDto): Record<string, 1 | -1> {
  const hasField = body.field !== undefined;
  // null is a value (refused below as not an object), not a way to leave `fields` out.
  const hasFields = body.fields !== undefined;
  if (hasField === hasFields)
    throw new ValidationFailedError([
      { field: 'field', message: 'give either field (with sort) or fields' },
    ]);
  if (hasField) return { [guardFieldPath(body.field, 'field')]: body.sort === 'desc' ? -1 : 1 };
  if (body.sort !== undefined) {
    throw new ValidationFailedError([
      { field: 'sort', message: 'goes with field; give directions inside fields' },
    ]);
  }
  const raw = body.fields;
  if (!isPlainObject(raw))
    throw new ValidationFailedError([{ field: 'fields', message: 'must be a JSON object' }]);
  const entries = Object.keys(raw);
  if (entries.length === 0 || entries.length > MAX_INDEX_FIELDS)
    throw new ValidationFailedError([
      { field: 'fields', message: `must name 1 to ${MAX_INDEX_FIELDS} fields` },
    ]);
  const fields: Record<string, 1 | -1> = {};
  const errors: FieldError[] = [];
  for (const key of entries) {
    const direction = raw[key];
    try {
      guardFieldPath(key, `fields.${key}`);
    } catch (error) {
      if (error instanceof ValidationFailedError) errors.push(...(error.errors ?? []));
      continue;
    }
    if (direction !== 1 && direction !== -1)
      errors.push({ field: `fields.${key}`, message: 'must be 1 or -1' });
    else fields[key] = direction;
  }
  if (errors.length > 0) throw new ValidationFailedError(errors);
  return fields;
}
