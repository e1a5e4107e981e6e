import { createHash } from 'node:crypto';
import type { Document } from 'mongodb';
import { ValidationFailedError, type FieldError } from '../../common/errors';
import { REVISION_FIELD } from './data.constants';
import { orderPathProblem } from './json-guard';

/**
 * `fields=a,b.c` (only these, plus `_id`) or `fields=-a,-b` (all but these). The server keeps
 * its revision record in every projection, so a projected item still has its ETag.
 */
export interface Projection {
  mode: 'include' | 'exclude';
  paths: string[];
}

/** Most paths one `fields` may name. */
export const MAX_PROJECTION_FIELDS = 100;

function overlaps(a: string, b: string): boolean {
  return a === b || a.startsWith(`${b}.`) || b.startsWith(`${a}.`);
}

/** The `fields` parameter; undefined when absent. */
export function parseProjection(text: string | undefined): Projection | null {
  if (text === undefined) return null;
  const errors: FieldError[] = [];
  const parts = text.split(',');
  const excluding = parts.map((part) => part.startsWith('-'));
  const mode = excluding[0] ? 'exclude' : 'include';
  if (excluding.some((e) => e !== excluding[0]))
    errors.push({
      field: 'fields',
      message: 'lists fields to include or, with -, to exclude; not both',
    });
  if (parts.length > MAX_PROJECTION_FIELDS)
    errors.push({ field: 'fields', message: `must name at most ${MAX_PROJECTION_FIELDS} fields` });
  const paths: string[] = [];
  for (const part of parts) {
    const path = part.startsWith('-') ? part.slice(1) : part;
    const problem = orderPathProblem(path);
    if (problem) errors.push({ field: 'fields', message: `field path ${problem}` });
    else if (mode === 'exclude' && path === '_id')
      errors.push({ field: 'fields', message: '_id is always returned' });
    else if (paths.some((other) => overlaps(other, path)))
      // MongoDB refuses a projection where one path contains another ("path collision").
      errors.push({ field: 'fields', message: `'${path}' overlaps another listed field` });
    else paths.push(path);
  }
  if (errors.length > 0) throw new ValidationFailedError(errors);
  return { mode, paths };
}

/** The MongoDB projection: the client's, keeping `_id` and the revision record. */
export function toMongoProjection(projection: Projection): Document {
  const value = projection.mode === 'include' ? 1 : 0;
  const fields: Document = Object.fromEntries(projection.paths.map((path) => [path, value]));
  if (projection.mode === 'include') fields[REVISION_FIELD] = 1;
  return fields;
}

/** Whether the projection returns the value at `path` (a sort field, for the page's cursor). */
export function projects(projection: Projection | null, path: string): boolean {
  if (!projection || path === '_id') return true;
  const listed = projection.paths.some((p) => path === p || path.startsWith(`${p}.`));
  return projection.mode === 'include' ? listed : !projection.paths.some((p) => overlaps(p, path));
}

/**
 * A projected item is another representation than the whole item, so its ETag differs: the
 * item's tag with the projection's digest appended. It still answers If-None-Match; If-Match
 * needs the whole item's tag.
 */
export function projectedETag(etag: string, projection: Projection | null): string {
  if (!projection) return etag;
  const digest = createHash('sha256')
    .update(JSON.stringify(projection))
    .digest('base64url')
    .slice(0, 10);
  return `${etag.slice(0, -1)}~${digest}"`;
}

/**
 * A projection applied in memory to an item as JSON, as the database applies it: included paths
 * (with `_id`) or everything but the excluded ones; a path through an array applies to each of
 * its objects.
 */
export function projectItem(
  item: Record<string, unknown>,
  projection: Projection | null,
): Record<string, unknown> {
  if (!projection) return item;
  if (projection.mode === 'exclude')
    return projection.paths.reduce<Record<string, unknown>>(
      (rest, path) => without(rest, path.split('.')) as Record<string, unknown>,
      item,
    );
  let picked: Record<string, unknown> = { _id: item._id };
  for (const path of projection.paths) {
    const value = pick(item, path.split('.'));
    if (value !== undefined) picked = merge(picked, value) as Record<string, unknown>;
  }
  return picked;
}

const isObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

/** The part of `value` a path keeps (undefined: nothing). */
function pick(value: unknown, [head, ...rest]: string[]): unknown {
  if (head === undefined) return value;
  if (Array.isArray(value))
    return value.filter(isObject).map((element) => pick(element, [head, ...rest]) ?? {});
  if (!isObject(value) || !Object.hasOwn(value, head)) return undefined;
  const inner = pick(value[head], rest);
  if (inner !== undefined) return { [head]: inner };
  return isObject(value[head]) ? { [head]: {} } : undefined;
}

function merge(into: unknown, from: unknown): unknown {
  if (Array.isArray(into) && Array.isArray(from))
    return into.map((element, i) => merge(element, from[i]));
  if (!isObject(into) || !isObject(from)) return from;
  const merged = { ...into };
  for (const [key, value] of Object.entries(from))
    merged[key] = Object.hasOwn(merged, key) ? merge(merged[key], value) : value;
  return merged;
}

/** `value` without the path (copied along it). */
function without(value: unknown, [head, ...rest]: string[]): unknown {
  if (head === undefined) return value;
  if (Array.isArray(value)) return value.map((element) => without(element, [head, ...rest]));
  if (!isObject(value) || !Object.hasOwn(value, head)) return value;
  const copy = { ...value };
  if (rest.length === 0) delete copy[head];
  else copy[head] = without(copy[head], rest);
  return copy;
}
