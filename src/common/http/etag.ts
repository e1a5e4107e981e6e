import { ValidationFailedError } from '../errors';

/**
 * Entity tags and the conditional request headers (RFC 9110 §8.8.3, §13.1.1, §13.1.2): the one
 * place that reads If-Match and If-None-Match and compares tags. Profiles, projects and data
 * items tag their representations `"<identity>.<revision>"` (revisionETag): the identity differs
 * per created resource, the revision is the counter the database increments with every write.
 */

/** One entity tag of a header list: its opaque part (between the quotes) and whether it is weak. */
export interface EntityTag {
  weak: boolean;
  opaque: string;
}

/** What If-Match asks of a write: nothing (absent), that the resource exists (`*`), or a tag. */
export type IfMatch =
  | { kind: 'absent' }
  | { kind: 'any' }
  /** The opaque parts of the strong tags listed (weak tags never match If-Match). */
  | { kind: 'tags'; opaques: string[] };

export const NO_PRECONDITION: IfMatch = { kind: 'absent' };

/** etagc: visible ASCII but `"`, and obs-text. */
const ETAG_CHARACTERS = /^[\x21\x23-\x7e\x80-\xff]*$/;

/**
 * `*`, or a comma-separated list of entity tags (empty list elements and optional whitespace
 * are allowed, as for every HTTP list). Null when the value is neither.
 */
export function parseETagList(value: string): '*' | EntityTag[] | null {
  const text = value.trim();
  if (text === '*') return '*';
  const tags: EntityTag[] = [];
  let i = 0;
  const skipWhitespace = () => {
    while (text[i] === ' ' || text[i] === '\t') i++;
  };
  while (i < text.length) {
    skipWhitespace();
    if (text[i] === ',') {
      i++;
      continue;
    }
    if (i >= text.length) break;
    const weak = text.startsWith('W/', i);
    if (weak) i += 2;
    if (text[i] !== '"') return null;
    const end = text.indexOf('"', i + 1);
    if (end < 0) return null;
    const opaque = text.slice(i + 1, end);
    if (!ETAG_CHARACTERS.test(opaque)) return null;
    tags.push({ weak, opaque });
    i = end + 1;
    skipWhitespace();
    if (i < text.length && text[i] !== ',') return null;
  }
  return tags.length > 0 ? tags : null;
}

function invalidHeader(name: string, message: string): ValidationFailedError {
  return new ValidationFailedError(
    [{ field: name, message }],
    `The ${name} header is not valid: ${message}.`,
  );
}

const LIST_RULE = 'must be * or a list of quoted entity tags, e.g. "665f1c2a9b1e8a0012345678.3"';

/** The If-Match header of a write; 400 when it is present but not `*` or a list of tags. */
export function readIfMatch(value: string | undefined): IfMatch {
  if (value === undefined) return NO_PRECONDITION;
  const parsed = parseETagList(value);
  if (parsed === null) throw invalidHeader('If-Match', LIST_RULE);
  if (parsed === '*') return { kind: 'any' };
  return { kind: 'tags', opaques: parsed.filter((tag) => !tag.weak).map((tag) => tag.opaque) };
}

/**
 * The preconditions of a write that evaluates If-Match. If-None-Match is evaluated on GET only:
 * on a write (`If-None-Match: *`, "only if absent") it is refused rather than ignored, since
 * ignoring it would overwrite what the client meant to protect.
 */
export function readWritePreconditions(
  headers: Record<string, string | string[] | undefined>,
): IfMatch {
  if (headers['if-none-match'] !== undefined)
    throw invalidHeader(
      'If-None-Match',
      'is evaluated on GET only; send If-Match with the ETag you read to make a write conditional',
    );
  return readIfMatch(single(headers['if-match']));
}

/** A header sent more than once reads as one comma-separated list. */
function single(value: string | string[] | undefined): string | undefined {
  return Array.isArray(value) ? value.join(', ') : value;
}

/** `"opaque"`: a strong entity tag as sent in ETag. */
export function formatETag(opaque: string): string {
  return `"${opaque}"`;
}

/** The opaque part of a tag made by formatETag. */
function opaqueOf(etag: string): string {
  return etag.slice(1, -1);
}

/**
 * Whether a write may go ahead against a resource whose current tag is `current` (null: there
 * is no current representation). Strong comparison: a weak tag never matches (RFC 9110 §13.1.1).
 */
export function ifMatchHolds(ifMatch: IfMatch, current: string | null): boolean {
  switch (ifMatch.kind) {
    case 'absent':
      return true;
    case 'any':
      return current !== null;
    case 'tags':
      return current !== null && ifMatch.opaques.includes(opaqueOf(current));
  }
}

/**
 * Whether a GET's If-None-Match names the current tag, so the answer is 304 (weak comparison:
 * `W/"x"` names `"x"`; `*` names any current representation). 400 when it is not `*` or a list.
 */
export function ifNoneMatchHits(value: string | string[] | undefined, current: string): boolean {
  const header = single(value);
  if (header === undefined) return false;
  const parsed = parseETagList(header);
  if (parsed === null) throw invalidHeader('If-None-Match', LIST_RULE);
  if (parsed === '*') return true;
  const opaque = opaqueOf(current);
  return parsed.some((tag) => tag.opaque === opaque);
}

/** Which created resource, and how many writes it has seen since. */
export interface Revision {
  /** Differs for every created resource (an id, or a token made at creation). */
  identity: string;
  revision: number;
}

const IDENTITY = /^[0-9A-Za-z]+$/;
const REVISION = /^(0|[1-9][0-9]{0,15})$/;

/** `"<identity>.<revision>"`, the tag of profiles, projects and data items. */
export function revisionETag({ identity, revision }: Revision): string {
  return formatETag(`${identity}.${revision}`);
}

/**
 * The revisions an If-Match with tags accepts: its strong tags that read as `identity.revision`
 * (any other tag can match no resource of this service and is left out).
 */
export function acceptedRevisions(ifMatch: Extract<IfMatch, { kind: 'tags' }>): Revision[] {
  const revisions: Revision[] = [];
  for (const opaque of ifMatch.opaques) {
    const dot = opaque.lastIndexOf('.');
    const identity = opaque.slice(0, dot);
    const revision = opaque.slice(dot + 1);
    if (dot < 0 || !IDENTITY.test(identity) || !REVISION.test(revision)) continue;
    const number = Number(revision);
    if (Number.isSafeInteger(number)) revisions.push({ identity, revision: number });
  }
  return revisions;
}

/**
 * The revisions of the resource `identity` that If-Match accepts, for a write filtered on them;
 * undefined when any revision will do (no If-Match, or `*`). [] when no tag names this resource:
 * the write can only fail.
 */
export function revisionsOf(ifMatch: IfMatch, identity: string): number[] | undefined {
  if (ifMatch.kind !== 'tags') return undefined;
  return acceptedRevisions(ifMatch)
    .filter((tag) => tag.identity === identity)
    .map((tag) => tag.revision);
}
