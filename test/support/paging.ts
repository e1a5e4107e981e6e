import type { Response } from 'supertest';
import type { Client } from './http';

/** One value of every entry of a list response, in order: `pluck(res, 'name')`. */
export function pluck(res: { body: unknown }, field: string): unknown[] {
  return (res.body as Record<string, unknown>[]).map((entry) => entry[field]);
}

/** The ids of a list response: `id` for resources, `_id` for data items. */
export function ids(res: { body: unknown }, field: 'id' | '_id' = 'id'): string[] {
  return pluck(res, field) as string[];
}

/**
 * The target of the response's Link header, or undefined when there is none. A Link header that
 * is not exactly `<target>; rel="<rel>"` fails the test.
 */
export function linkTarget(
  res: { headers: Record<string, string> },
  rel: 'next' | 'prev' = 'next',
): string | undefined {
  const header = res.headers.link;
  if (header === undefined) return undefined;
  const match = /^<([^>]+)>; rel="([a-z]+)"$/.exec(header);
  expect({ link: header, rel: match?.[2] }).toEqual({ link: header, rel });
  return match![1];
}

/**
 * Every page from `firstUrl` on, following the `rel` Link of each page (each must answer 200)
 * until a page has none; fails if there are more than `maxPages`.
 */
export async function collectPages(
  api: Client,
  firstUrl: string,
  { rel = 'next', maxPages = 100 }: { rel?: 'next' | 'prev'; maxPages?: number } = {},
): Promise<Response[]> {
  const pages: Response[] = [];
  let url: string | undefined = firstUrl;
  while (url !== undefined) {
    const res = await api.get(url).expect(200);
    pages.push(res);
    expect(pages.length).toBeLessThanOrEqual(maxPages);
    url = linkTarget(res, rel);
  }
  return pages;
}
