// The installed package from a plain Node ES module, against the service at PDS_BASE_URL.
import assert from 'node:assert/strict';
import { ApiProblemError, createApiClient, unwrap } from '@profile-data/client';

const baseUrl = process.env.PDS_BASE_URL;
const operator = createApiClient({ baseUrl, apiKey: process.env.PDS_ADMIN_KEY });
const created = await unwrap(operator.POST('/admin/users', { body: { email: 'esm@example.com' } }));
const api = createApiClient({ baseUrl, apiKey: created.apiKey });

const notes = { collection: 'notes' };
const note = await unwrap(
  api.POST('/data/{collection}', { params: { path: notes }, body: { item: { text: 'from ESM' } } }),
);
const read = await unwrap(
  api.GET('/data/{collection}/{indexName}/{indexValue}', {
    params: { path: { ...notes, indexName: '_id', indexValue: note._id } },
  }),
);
assert.equal(read.text, 'from ESM');

await assert.rejects(
  unwrap(
    api.GET('/data/{collection}/{indexName}/{indexValue}', {
      params: { path: { ...notes, indexName: '_id', indexValue: 'no-such-item' } },
    }),
  ),
  (error) => error instanceof ApiProblemError && error.problem?.code === 'ITEM_NOT_FOUND',
);
console.log(`flow.mjs: created ${note._id}, read it back, ITEM_NOT_FOUND as an ApiProblemError`);
