// A live query through the typed client: list with a filter, take the list's Feed-Position,
// and read the changes after it with the same filter: an item that starts matching is `entered`.
import assert from 'node:assert/strict';
import { unwrap } from '../src';
import { newUser, type Target } from './support';

export async function liveQueryFlow(target: Target): Promise<void> {
  const { api } = await newUser(target);
  const orders = { path: { collection: 'orders' } };
  const open = { status: 'open' };
  await unwrap(
    api.POST('/data/{collection}', {
      params: orders,
      body: { item: { _id: 'o1', status: 'closed' } },
    }),
  );
  const listed = await api.GET('/data/{collection}', {
    params: { ...orders, query: { filter: open } },
  });
  assert.equal(listed.response.status, 204);
  const position = listed.response.headers.get('Feed-Position');
  assert.match(position ?? '', /^\d+$/);

  await unwrap(
    api.PUT('/data/{collection}/{indexName}/{indexValue}', {
      params: { path: { collection: 'orders', indexName: '_id', indexValue: 'o1' } },
      body: { values: open },
    }),
  );
  const page = await unwrap(
    api.GET('/events', {
      params: { query: { collection: 'orders', filter: open, after: position ?? '' } },
    }),
  );
  assert.deepEqual(
    page.events.map((event) => [event.type, event.key]),
    [['entered', 'o1']],
  );
}
