import { isPlainObject } from '../common/json';

/** A MongoDB update in dotted paths: `$set` values and `$unset` paths. */
export interface DottedUpdate {
  set: Record<string, unknown>;
  unset: string[];
}

export interface MergeResult extends DottedUpdate {
  /** The merged object, i.e. what the stored field holds after the update. */
  merged: Record<string, unknown>;
}

/** The patch with its `null`s dropped: what a patch object becomes where nothing is to merge into. */
function withoutNulls(patch: Record<string, unknown>): Record<string, unknown> {
  const result: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(patch)) {
    if (value === null) continue;
    result[key] = isPlainObject(value) ? withoutNulls(value) : value;
  }
  return result;
}

/**
 * Applies a JSON merge patch (RFC 7386) to `target` and returns the result together with the
 * equivalent MongoDB update on the field at `path`: `null` unsets a key, an object merges into an
 * object (and replaces anything else), every other value is set. Keys must have been checked by
 * the profile JSON rules (no '.', no '$'), which is what makes the dotted paths safe. Pure: `target` is not
 * modified.
 */
export function mergePatch(
  target: Record<string, unknown>,
  patch: Record<string, unknown>,
  path: string,
): MergeResult {
  const merged: Record<string, unknown> = { ...target };
  const set: Record<string, unknown> = {};
  const unset: string[] = [];
  for (const [key, value] of Object.entries(patch)) {
    const keyPath = `${path}.${key}`;
    const current = Object.hasOwn(target, key) ? target[key] : undefined;
    if (value === null) {
      if (current !== undefined) {
        delete merged[key];
        unset.push(keyPath);
      }
    } else if (isPlainObject(value) && isPlainObject(current)) {
      const inner = mergePatch(current, value, keyPath);
      merged[key] = inner.merged;
      Object.assign(set, inner.set);
      unset.push(...inner.unset);
    } else {
      const replacement = isPlainObject(value) ? withoutNulls(value) : value;
      merged[key] = replacement;
      set[keyPath] = replacement;
    }
  }
  return { merged, set, unset };
}
