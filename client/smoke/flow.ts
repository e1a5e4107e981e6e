// The installed package in a strict TypeScript app: compiled twice, with moduleResolution node16
// (tsconfig.node16.json, then run) and bundler (tsconfig.bundler.json), against the service at
// PDS_BASE_URL. The app has no @types/node: it is written against the web platform alone.
import {
  ApiProblemError,
  createApiClient,
  unwrap,
  type Problem,
  type Schemas,
} from '@profile-data/client';

declare const process: { env: Record<string, string | undefined> };

/** True only for `any`: the package's types must reach the app, not dissolve into `any`. */
type IsAny<T> = 0 extends 1 & T ? true : false;

function check(condition: boolean, message: string): asserts condition {
  if (!condition) throw new Error(`flow.ts: ${message}`);
}

const baseUrl = process.env.PDS_BASE_URL ?? '';
const operator = createApiClient({ baseUrl, apiKey: process.env.PDS_ADMIN_KEY ?? '' });
const created = await unwrap(
  operator.POST('/admin/users', { body: { email: 'typescript@example.com' } }),
);
const api = createApiClient({ baseUrl, apiKey: created.apiKey });

const notes = { collection: 'notes' };
const note = await unwrap(
  api.POST('/data/{collection}', {
    params: { path: notes },
    body: { item: { text: 'from TypeScript' } },
  }),
);
// Does not compile if the item were `any`.
const noteIsTyped: IsAny<typeof note> = false;
const id: string = note._id;
const read = await unwrap(
  api.GET('/data/{collection}/{indexName}/{indexValue}', {
    params: { path: { ...notes, indexName: '_id', indexValue: id } },
  }),
);
check(read.text === 'from TypeScript', `GET answered ${JSON.stringify(read)}`);

const missing = await api.GET('/data/{collection}/{indexName}/{indexValue}', {
  params: { path: { ...notes, indexName: '_id', indexValue: 'no-such-item' } },
});
const problem: Problem | undefined = missing.error;
check(missing.response.status === 404, `a missing item answered ${missing.response.status}`);
check(problem?.code === 'ITEM_NOT_FOUND', `its problem is ${JSON.stringify(problem)}`);
try {
  await unwrap(
    operator.GET('/admin/users/{subject}', { params: { path: { subject: 'no-such-user' } } }),
  );
  check(false, 'an unknown user was found');
} catch (error) {
  check(error instanceof ApiProblemError, `unwrap threw ${String(error)}`);
  check(error.status === 404, `unwrap's problem is ${JSON.stringify(error.problem)}`);
}

const collections: Schemas['DataCollectionDto'][] = await unwrap(api.GET('/data'));
check(
  collections.some((c) => c.name === 'notes'),
  `GET /data answered ${JSON.stringify(collections)}`,
);
console.log(`flow.ts: created ${id}, read it back, ITEM_NOT_FOUND as a typed problem`);
