import { useState } from 'react';
import { ApiProblemError, useApi } from '../../api';
import { pageCursors, problemOf } from '@profile-data/client';
import { useLoad } from '../../ui/async';
import { cursorAt, cursorPaths, listParams, type ItemQuery, type LinkCursor } from './query';

export type Item = Record<string, unknown> & { _id: string };

export interface Page {
  items: Item[];
  /** The cursor of the following page, when there is one. */
  next?: LinkCursor;
  /** The cursor of the page before, when there is one; `first` when it is the first page. */
  prev?: LinkCursor | 'first';
}

/**
 * One page of the items query, walked with keyset cursors: forwards with the `after[…]` cursor
 * of the `Link` header, backwards with `before[…]` at the page's first item (the service answers
 * the items just before it, in the query's order), so a page back is exactly the page before.
 */
export function usePage(collection: string, query: ItemQuery) {
  const { client } = useApi();
  const [cursor, setCursor] = useState<LinkCursor | undefined>(undefined);
  const [shown, setShown] = useState({ collection, query });
  // A new query (or collection) starts at the first page.
  if (shown.collection !== collection || shown.query !== query) {
    setShown({ collection, query });
    setCursor(undefined);
  }
  const page = useLoad(
    async (signal): Promise<Page> => {
      const paths = cursorPaths(query);
      const result = await client.GET('/data/{collection}', {
        params: {
          path: { collection },
          query: { ...listParams(query), ...(cursor ? { [cursor.side]: cursor.cursor } : {}) },
        },
        signal,
      });
      if (!result.response.ok)
        throw new ApiProblemError(result.response.status, problemOf(result.error));
      const items: Item[] = result.response.status === 204 ? [] : (result.data ?? []);
      const link = pageCursors(result.response);
      // The edge items' sort values, read again when the projection leaves them out.
      const edge = async (item: Item | undefined, side: LinkCursor['side']) => {
        if (!item) return undefined;
        let at = cursorAt(item, paths);
        if (!at) {
          const whole = await client.GET('/data/{collection}/{indexName}/{indexValue}', {
            params: {
              path: { collection, indexName: '_id', indexValue: item._id },
              query: { fields: paths.join(',') },
            },
            signal,
          });
          at = whole.data ? cursorAt(whole.data, paths) : undefined;
        }
        return at ? { side, cursor: at } : undefined;
      };
      if (cursor?.side === 'before')
        return {
          items,
          next: await edge(items.at(-1), 'after'),
          prev: link.prev
            ? { side: 'before', cursor: link.prev }
            : items.length > 0
              ? undefined
              : 'first',
        };
      return {
        items,
        next: link.next ? { side: 'after', cursor: link.next } : undefined,
        prev: cursor ? ((await edge(items[0], 'before')) ?? 'first') : undefined,
      };
    },
    [client, collection, query, cursor],
  );
  const go = (to: LinkCursor | 'first' | undefined) =>
    setCursor(to === 'first' || to === undefined ? undefined : to);
  return { page, go, atStart: cursor === undefined };
}
