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
