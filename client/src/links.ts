/**
 * The `Link` header of a list page (RFC 8288): the service links the following page with
 * `rel="next"` (its `after[…]` cursor) and, on a page walked backwards, the page before with
 * `rel="prev"` (its `before[…]` cursor).
 */

/** A keyset cursor by field, as a list takes it: `{ id: '…' }` is `after[id]=…`. */
export type PageCursor = Record<string, string>;

/** The cursors a page links to; each is absent when the header has no such link. */
export interface PageCursors {
  /** The following page: pass it as the same list's `after`. */
  next?: PageCursor;
  /** The page before (a page walked backwards with `before`): pass it as `before`. */
  prev?: PageCursor;
}

/** One link: `<target>` and what follows it up to the next link. */
const LINK = /<([^>]*)>([^<]*)/g;

/** The `rel` parameter of a link, quoted or a bare token. */
const REL = /;\s*rel\s*=\s*(?:"([^"]*)"|([^\s;,"]+))/i;

/**
 * The targets of a `Link` header by relation type, as written (relative targets stay relative):
 * `parseLink('</files?after%5Bid%5D=f2>; rel="next"').get('next')` is `/files?after%5Bid%5D=f2`.
 * A link with several relation types (`rel="next last"`) is listed under each; the first link of
 * a type wins. No header, or one without links, is an empty map.
 */
export function parseLink(header: string | null | undefined): ReadonlyMap<string, string> {
  const links = new Map<string, string>();
  for (const [, target = '', params = ''] of (header ?? '').matchAll(LINK)) {
    const rel = REL.exec(params);
    const types = (rel?.[1] ?? rel?.[2] ?? '').trim();
    if (types === '') continue;
    for (const type of types.toLowerCase().split(/\s+/))
      if (!links.has(type)) links.set(type, target);
  }
  return links;
}

/**
 * The cursors of the pages a list page links to, read from its `Link` header: what a list call
 * takes as `after` (`next`) or `before` (`prev`) to go on.
 *
 * ```ts
 * const page = await api.GET('/files', { params: { query: { limit: 20 } } });
 * const { next } = pageCursors(page.response);
 * if (next) await api.GET('/files', { params: { query: { limit: 20, after: next } } });
 * ```
 */
export function pageCursors(response: { headers: Headers }): PageCursors {
  const links = parseLink(response.headers.get('Link'));
  const next = cursorOf(links.get('next'), 'after');
  const prev = cursorOf(links.get('prev'), 'before');
  return { ...(next ? { next } : {}), ...(prev ? { prev } : {}) };
}

/** The `side[field]=value` parameters of a link's target, by field. */
function cursorOf(target: string | undefined, side: 'after' | 'before'): PageCursor | undefined {
  if (target === undefined) return undefined;
  let params: URLSearchParams;
  try {
    // Only the query is read: any base resolves a relative target to the same one.
    params = new URL(target, 'http://link.invalid').searchParams;
  } catch {
    return undefined;
  }
  const fields: [string, string][] = [];
  for (const [name, value] of params)
    if (name.startsWith(`${side}[`) && name.endsWith(']') && name.length > side.length + 2)
      fields.push([name.slice(side.length + 1, -1), value]);
  // fromEntries: a field named `__proto__` is a field like any other.
  return fields.length > 0 ? Object.fromEntries(fields) : undefined;
}
