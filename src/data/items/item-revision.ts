import type { Document } from 'mongodb';
import { Types } from 'mongoose';
import {
  acceptedRevisions,
  revisionETag,
  type IfMatch,
  type Revision,
} from '../../common/http/etag';
import { atRevision } from '../../common/mongo/revision';
import { REVISION_FIELD } from '../query/data.constants';
import { isPlainObject } from '../../common/json';
import { afterSet } from '../rules/schema/after-set';

/**
 * The revision of data items, kept in the item itself (REVISION_FIELD): `{c, n}`, where `c` is
 * a fresh ObjectId made when the item is created and `n` counts its writes (0 when created,
 * `$inc`ed by every update). The ETag is `"<c>.<n>"`: an item deleted and created again under
 * the same `_id` gets another `c`, so its tags never repeat, and neither do those of two
 * tenants' items at the same URL.
 *
 * Items stored before revisions existed have no record. They count as revision 0 (a missing `n`
 * is 0, and their first update creates `n`), and their identity is `l` + their `_createdAt` in
 * base-36 milliseconds: stable, and distinct from every identity made since (which is hex).
 */

const CREATION = `${REVISION_FIELD}.c`;
const COUNT = `${REVISION_FIELD}.n`;

export const CREATION_TOKEN = /^[0-9a-f]{24}$/;
const LEGACY_IDENTITY = /^l([0-9a-z]*)$/;

/** The record a new item is stored with. */
export function newRevisionRecord(): { c: string; n: number } {
  return { c: new Types.ObjectId().toHexString(), n: 0 };
}

/** The update part that counts a write (with the `$set` of the same update). */
export const COUNT_WRITE = { $inc: { [COUNT]: 1 } };

/**
 * The item as a `$set` with COUNT_WRITE leaves it, computed from the item before (afterSet;
 * the count one up, a record made when it had none), or null when a path goes through an array
 * (`tags.0`), which only the database applies.
 */
export function afterWrite<T extends Document>(before: T, set: Document): T | null {
  if (Object.keys(set).some((path) => throughArray(before, path))) return null;
  const after = afterSet(before, set) as T;
  const record: unknown = before[REVISION_FIELD];
  const kept = isPlainObject(record) ? record : {};
  const n = typeof kept.n === 'number' ? kept.n : 0;
  return { ...after, [REVISION_FIELD]: { ...kept, n: n + 1 } };
}

/** Whether a dotted `$set` path goes through an array of the item. */
function throughArray(item: Document, path: string): boolean {
  let node: unknown = item;
  for (const segment of path.split('.').slice(0, -1)) {
    if (!isPlainObject(node)) return Array.isArray(node);
    node = node[segment];
  }
  return Array.isArray(node);
}

function legacyIdentity(createdAt: unknown): string {
  return createdAt instanceof Date && createdAt.getTime() >= 0
    ? `l${createdAt.getTime().toString(36)}`
    : 'l';
}

/** The identity and revision of a stored item. */
export function itemRevision(item: Document): Revision {
  const record: unknown = item[REVISION_FIELD];
  const c = isPlainObject(record) && typeof record.c === 'string' ? record.c : null;
  const n = isPlainObject(record) && typeof record.n === 'number' ? record.n : 0;
  return { identity: c ?? legacyIdentity(item._createdAt), revision: n };
}

export function itemETag(item: Document): string {
  return revisionETag(itemRevision(item));
}

/** The filter for an item at this revision; null when the tag cannot be an item's. */
function revisionClause({ identity, revision }: Revision): Document | null {
  const count = atRevision(COUNT, [revision]);
  if (CREATION_TOKEN.test(identity)) return { [CREATION]: identity, ...count };
  const legacy = LEGACY_IDENTITY.exec(identity);
  if (!legacy) return null;
  const createdAt = legacy[1] ? parseInt(legacy[1], 36) : null;
  if (createdAt !== null && !(createdAt <= 8.64e15)) return null;
  return {
    [CREATION]: { $exists: false },
    ...(createdAt === null ? {} : { _createdAt: new Date(createdAt) }),
    ...count,
  };
}

/**
 * The condition a write under If-Match adds to its filter: the item is at one of the revisions
 * the header names. Undefined when any revision will do (no If-Match, or `*`); a condition that
 * matches nothing when no tag can be an item's.
 */
export function revisionCondition(ifMatch: IfMatch): Document | undefined {
  if (ifMatch.kind !== 'tags') return undefined;
  const clauses: Document[] = [];
  for (const tag of acceptedRevisions(ifMatch)) {
    const clause = revisionClause(tag);
    if (clause) clauses.push(clause);
  }
  if (clauses.length === 0) return { [COUNT]: { $in: [] } };
  return clauses.length === 1 ? clauses[0] : { $or: clauses };
}

/** If-Match naming exactly the tag read. */
export function tagOf(etag: string): IfMatch {
  return { kind: 'tags', opaques: [etag.slice(1, -1)] };
}
