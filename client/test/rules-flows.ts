// Collection rules through the typed client: a schema put and enforced (422 with pointers, warn
// with Schema-Warnings), the stored items that break it listed, and an expiry rule set and read.
import assert from 'node:assert/strict';
import { unwrap } from '../src';
import { expectProblem, newUser, type Target } from './support';

export async function collectionRulesFlow(target: Target): Promise<void> {
  const { api } = await newUser(target);
  const collection = { params: { path: { collection: 'tasks' } } };

  await unwrap(api.POST('/data/{collection}', { ...collection, body: { item: { _id: 'old' } } }));
  const rule = await unwrap(
    api.PUT('/data/{collection}/schema', {
      ...collection,
      body: {
        schema: { type: 'object', properties: { title: { type: 'string' } }, required: ['title'] },
        action: 'error',
      },
    }),
  );
  assert.equal(rule.action, 'error');

  const refused = expectProblem(
    await api.POST('/data/{collection}', { ...collection, body: { item: { title: 7 } } }),
    422,
    'SCHEMA_VIOLATION',
  );
  assert.deepEqual(
    refused.errors?.map((e) => [e.pointer, e.keyword]),
    [['/title', 'type']],
  );
  const scan = await unwrap(
    api.GET('/data/{collection}/schema-violations', {
      params: { path: { collection: 'tasks' }, query: { limit: '10' } },
    }),
  );
  assert.equal(scan.checked, 1);
  assert.deepEqual(
    scan.sample.map((s) => s._id),
    ['old'],
  );

  await unwrap(
    api.PUT('/data/{collection}/schema', {
      ...collection,
      body: { schema: { properties: { title: { type: 'string' } } }, action: 'warn' },
    }),
  );
  const warned = await api.POST('/data/{collection}', {
    ...collection,
    body: { item: { title: 7 } },
  });
  assert.equal(warned.response.status, 200);
  assert.equal(warned.response.headers.get('Schema-Warnings'), '#/title type');

  const expiry = await unwrap(
    api.PUT('/data/{collection}/expiry', {
      ...collection,
      body: { field: '_createdAt', afterSeconds: 86_400 },
    }),
  );
  assert.equal(expiry.afterSeconds, 86_400);
  await unwrap(api.DELETE('/data/{collection}/schema', collection));
  expectProblem(await api.GET('/data/{collection}/schema', collection), 404, 'SCHEMA_NOT_FOUND');
}
