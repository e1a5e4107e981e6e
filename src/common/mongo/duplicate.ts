import { isUniqueViolation } from '../errors/mongo-errors';

/**
 * The one way a repository reports that a unique index refused a write: it returns DUPLICATE
 * (absence is `null`, other failures are thrown). Services decide what a duplicate means.
 */
export const DUPLICATE: unique symbol = Symbol('duplicate');
export type Duplicate = typeof DUPLICATE;

/** Runs a write; a unique-index refusal becomes DUPLICATE, anything else is rethrown. */
export async function orDuplicate<T>(write: () => Promise<T>): Promise<T | Duplicate> {
  try {
    return await write();
  } catch (error) {
    if (isUniqueViolation(error)) return DUPLICATE;
    throw error;
  }
}

/**
 * How many documents of an ordered insertMany went in before a unique index refused one (the
 * documents after it were not tried; MongoDB and FerretDB both report `insertedCount`); null
 * when the insert failed otherwise.
 */
export function insertedBeforeRefusal(error: unknown): number | null {
  const e = error as { writeErrors?: unknown; insertedCount?: unknown } | null;
  const writeErrors = Array.isArray(e?.writeErrors) ? (e.writeErrors as unknown[]) : [];
  if (writeErrors.length > 0) {
    if (!writeErrors.every((w) => isUniqueViolation(w))) return null;
    return typeof e?.insertedCount === 'number' ? e.insertedCount : null;
  }
  return isUniqueViolation(error) ? 0 : null;
}
