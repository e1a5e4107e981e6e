import { createHash } from 'node:crypto';
import { ValidationFailedError, type FieldError } from '../../common/errors';
import { COLLECTION_NAME_PATTERN, MANAGED_FIELDS } from '../query/data.constants';
import { orderPathProblem } from '../query/json-guard';
import type { Projection } from '../query/projection';

/**
 * `expand=customer:customers,lines.product:products` (docs/data.md, "Expanding references"): the
 * references a read replaces by the items they name. Pure: the query string and `fields` become
 * the expansions and the projection the main query keeps.
 */

/** Most `path:collection` pairs one request may expand. */
export const MAX_EXPANSIONS = 4;

export interface Expansion {
  /** The client field path of the reference; one array on the way is crossed. */
  path: string;
  /** The collection, in the caller's namespace and branch, the ids name items of. */
  collection: string;
  /** What `fields` keeps of each expanded item (paths below `path`); null: the whole item. */
  projection: Projection | null;
}

export interface ExpandRequest {
  expansions: Expansion[];
  /** The main query's projection: paths below an expanded path keep the reference itself. */
  projection: Projection | null;
}

const within = (path: string, outer: string) => path === outer || path.startsWith(`${outer}.`);

/** The `expand` parameter (undefined: none) and the request's `fields` (null: none). */
export function parseExpandRequest(
  text: string | undefined,
  projection: Projection | null,
): ExpandRequest {
  if (text === undefined) return { expansions: [], projection };
  const errors: FieldError[] = [];
  const fail = (message: string) => errors.push({ field: 'expand', message });
  const pairs = text.split(',');
  if (pairs.length > MAX_EXPANSIONS)
    fail(`must name at most ${MAX_EXPANSIONS} path:collection pairs`);
  const found: { path: string; collection: string }[] = [];
  for (const pair of pairs) {
    const parts = pair.split(':');
    const [path, collection] = parts;
    if (parts.length !== 2 || path === undefined || collection === undefined) {
      fail(`'${pair}' is not a path:collection pair`);
      continue;
    }
    const problem = orderPathProblem(path);
    if (problem) fail(`field path ${problem}`);
    else if (MANAGED_FIELDS.has(path.split('.')[0] ?? ''))
      fail(`'${path}' is set by the server; only client fields hold references`);
    else if (!COLLECTION_NAME_PATTERN.test(collection))
      fail(`'${collection}' is not a collection name`);
    else if (found.some((other) => within(path, other.path) || within(other.path, path)))
      fail(`'${path}' overlaps another expanded path`);
    else found.push({ path, collection });
  }
  if (errors.length > 0) throw new ValidationFailedError(errors);
  return splitProjection(found, projection);
}

/**
 * `fields` with expansions: a path below an expanded path (`customer.name`) keeps the reference
 * (`customer`) in the main query and applies to the expanded items; any other path applies to the
 * main item as it does without `expand`. Excluding the reference itself (or an object holding
 * it) leaves nothing to expand.
 */
function splitProjection(
  found: { path: string; collection: string }[],
  projection: Projection | null,
): ExpandRequest {
  if (!projection)
    return { expansions: found.map((e) => ({ ...e, projection: null })), projection };
  const main: string[] = [];
  const below = new Map<string, string[]>(found.map((e) => [e.path, []]));
  const whole = new Set<string>();
  for (const path of projection.paths) {
    const outer = found.find((e) => path.startsWith(`${e.path}.`));
    if (outer) {
      below.get(outer.path)?.push(path.slice(outer.path.length + 1));
      if (projection.mode === 'include' && !main.includes(outer.path)) main.push(outer.path);
      continue;
    }
    // The reference itself, or an object holding it: the expanded items are whole.
    for (const e of found) if (within(e.path, path)) whole.add(e.path);
    main.push(path);
  }
  const { mode } = projection;
  if (mode === 'exclude' && [...below.values()].some((paths) => paths.includes('_id')))
    throw new ValidationFailedError([{ field: 'fields', message: '_id is always returned' }]);
  const expansions = found.map((e): Expansion => {
    const paths = below.get(e.path) ?? [];
    const own = paths.length === 0 || whole.has(e.path) ? null : { mode, paths };
    return { ...e, projection: own };
  });
  return {
    expansions,
    projection: main.length === 0 ? null : { mode, paths: main },
  };
}

/**
 * The ETag of an item answered with its references expanded: the item's tag (itemETag, or
 * projectedETag with `fields`) with a digest of the answer appended. The item's own tag does not
 * cover the items it expands, so the answer's digest does: If-None-Match answers 304 only while
 * every expanded item is as it was; If-Match needs the whole item's tag.
 */
export function expandedETag(etag: string, answer: unknown): string {
  const digest = createHash('sha256').update(JSON.stringify(answer)).digest('base64url');
  return `${etag.slice(0, -1)}+${digest.slice(0, 16)}"`;
}
