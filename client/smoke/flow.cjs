// The installed package from a CommonJS script (require), against the service at PDS_BASE_URL.
const assert = require('node:assert/strict');
const { ApiProblemError, createApiClient, problemOf, unwrap } = require('@profile-data/client');

async function main() {
  const baseUrl = process.env.PDS_BASE_URL;
  const operator = createApiClient({ baseUrl, apiKey: process.env.PDS_ADMIN_KEY });
  const created = await unwrap(
    operator.POST('/admin/users', { body: { email: 'commonjs@example.com' } }),
  );
  const api = createApiClient({ baseUrl, apiKey: created.apiKey });

  const notes = { collection: 'notes' };
  const note = await unwrap(
    api.POST('/data/{collection}', {
      params: { path: notes },
      body: { item: { text: 'from CommonJS' } },
    }),
  );
  const read = await unwrap(
    api.GET('/data/{collection}/{indexName}/{indexValue}', {
      params: { path: { ...notes, indexName: '_id', indexValue: note._id } },
    }),
  );
  assert.equal(read.text, 'from CommonJS');

  const missing = await api.GET('/data/{collection}/{indexName}/{indexValue}', {
    params: { path: { ...notes, indexName: '_id', indexValue: 'no-such-item' } },
  });
  assert.equal(missing.response.status, 404);
  assert.equal(problemOf(missing.error)?.code, 'ITEM_NOT_FOUND');
  assert.equal(typeof ApiProblemError, 'function');
  console.log(`flow.cjs: created ${note._id}, read it back, ITEM_NOT_FOUND as a problem`);
}

main().catch((error) => {
  console.error(error);
  process.exitCode = 1;
});
