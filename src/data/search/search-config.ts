import { ValidationFailedError, type FieldError } from '../../common/errors';
import { CLIENT_PATH_SCHEMA_PATTERN, fieldPathProblem } from '../query/json-guard';
import { MIN_TOKEN_LENGTH } from './tokenizer';

/** What PUT /data/{c}/search sets: the fields read for words, and the shortest word indexed. */
export interface SearchConfig {
  fields: string[];
  minTokenLength: number;
}

const CLIENT_PATH = new RegExp(CLIENT_PATH_SCHEMA_PATTERN, 'u');

/**
 * A body read as a search configuration; 400 VALIDATION_FAILED naming every wrong member:
 * `fields` 1..maxFields distinct client paths (not `_id` nor a timestamp), `minTokenLength` an
 * integer within MIN_TOKEN_LENGTH (default 2), nothing else, no explicit null.
 */
export function readSearchConfig(body: Record<string, unknown>, maxFields: number): SearchConfig {
  const errors: FieldError[] = [];
  for (const member of Object.keys(body)) {
    if (member !== 'fields' && member !== 'minTokenLength')
      errors.push({ field: member, message: 'is not a member of a search configuration' });
  }
  const { fields, minTokenLength = MIN_TOKEN_LENGTH.default } = body;
  if (!Array.isArray(fields) || fields.length === 0 || fields.length > maxFields) {
    errors.push({
      field: 'fields',
      message: `must be an array of 1 to ${maxFields} field paths (SEARCH_MAX_FIELDS)`,
    });
  } else {
    fields.forEach((path: unknown, i) => {
      const field = `fields[${i}]`;
      if (typeof path !== 'string') return errors.push({ field, message: 'must be a string' });
      const problem = fieldPathProblem(path);
      if (problem) return errors.push({ field, message: problem });
      if (!CLIENT_PATH.test(path))
        return errors.push({ field, message: 'must be a client field, not _id nor a timestamp' });
      if (fields.indexOf(path) !== i) errors.push({ field, message: `repeats '${path}'` });
    });
  }
  if (
    typeof minTokenLength !== 'number' ||
    !Number.isInteger(minTokenLength) ||
    minTokenLength < MIN_TOKEN_LENGTH.min ||
    minTokenLength > MIN_TOKEN_LENGTH.max
  ) {
    errors.push({
      field: 'minTokenLength',
      message: `must be an integer from ${MIN_TOKEN_LENGTH.min} to ${MIN_TOKEN_LENGTH.max}`,
    });
  }
  if (errors.length > 0) throw new ValidationFailedError(errors);
  return { fields: fields as string[], minTokenLength: minTokenLength as number };
}

/** The first search field that reaches one of `protectedPaths` (equal, inside, holding); null. */
export function protectedSearchField(
  fields: readonly string[],
  protectedPaths: readonly string[],
): { field: string; hidden: string } | null {
  for (const field of fields)
    for (const hidden of protectedPaths)
      if (field === hidden || field.startsWith(`${hidden}.`) || hidden.startsWith(`${field}.`))
        return { field, hidden };
  return null;
}
