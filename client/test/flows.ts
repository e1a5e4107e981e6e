// What an app does with the typed client, as three flows against a running service: a root user,
// a sub profile acting for itself, and a team. Every value comes out of the client typed by the
// OpenAPI document; nothing is cast. Failures are node:assert errors.
import assert from 'node:assert/strict';
import { createApiClient, pageCursors, unwrap } from '../src';
import { expectProblem, newUser, unique, type Target } from './support';

/** Root: its profile, a project's life, and a data collection's items. */
export async function rootFlow(target: Target): Promise<void> {
  const { api, subject } = await newUser(target);

  const profile = await unwrap(api.GET('/profile'));
  assert.equal(profile.subject, subject);
  assert.equal(profile.accountId, '');
  assert.deepEqual(profile.groups, []);
  const updatedProfile = await unwrap(
    api.PUT('/profile', { body: { settings: { theme: 'dark' }, metadata: { tier: 'gold' } } }),
  );
  assert.equal(updatedProfile.settings.theme, 'dark');
  assert.equal(updatedProfile.metadata.tier, 'gold');

  // Projects: create two, list with a typed filter and a page size, read, update.
  const apollo = await unwrap(api.POST('/project', { body: { name: 'Apollo', tags: ['space'] } }));
  assert.equal(apollo.userId, subject);
  assert.equal(apollo.teamId, '');
  await unwrap(api.POST('/project', { body: { name: 'Gemini' } }));
  const byName = await unwrap(api.GET('/project', { params: { query: { name: 'Apollo' } } }));
  assert.deepEqual(
    byName.map((p) => p.id),
    [apollo.id],
  );
  const byTag = await unwrap(
    api.GET('/project', { params: { query: { 'filter[tag]': 'space' } } }),
  );
  assert.deepEqual(
    byTag.map((p) => p.name),
    ['Apollo'],
  );
  const firstPage = await api.GET('/project', {
    params: { query: { sort: 'name', sortOrder: 'asc', limit: 1 } },
  });
  assert.deepEqual(
    firstPage.data?.map((p) => p.name),
    ['Apollo'],
  );
  assert.deepEqual(pageCursors(firstPage.response), { next: { name: 'Apollo', id: apollo.id } });
  const read = await unwrap(
    api.GET('/project/{projectId}', { params: { path: { projectId: apollo.id } } }),
  );
  assert.deepEqual(read, apollo);
  const renamed = await unwrap(
    api.PUT('/project/{projectId}', {
      params: { path: { projectId: apollo.id } },
      body: { name: 'Apollo 11', tags: ['space', 'moon'] },
    }),
  );
  assert.equal(renamed.name, 'Apollo 11');
  assert.deepEqual(renamed.tags, ['space', 'moon']);
  expectProblem(
    await api.GET('/project/{projectId}', {
      params: { path: { projectId: '665f1c2a9b1e8a0012345678' } },
    }),
    404,
    'PROJECT_NOT_FOUND',
  );
  const refused = await api.POST('/project', { body: { name: '' } });
  expectProblem(refused, 400, 'VALIDATION_FAILED');
  // The typed error as an app reads it: the problem's members, field errors included.
  assert.equal(refused.data, undefined);
  assert.deepEqual(
    refused.error?.errors?.map((e) => e.field),
    ['name'],
  );

  // Data: create, read by _id and by a field, update, count, list, delete.
  const collection = { collection: 'notes' };
  const note = await unwrap(
    api.POST('/data/{collection}', {
      params: { path: collection },
      body: { item: { text: 'hello', done: false, slug: 'first' } },
    }),
  );
  assert.equal(note.text, 'hello');
  assert.equal(note.userId, subject);
  assert.match(note._createdAt, /^\d{4}-\d\d-\d\dT/);
  const byId = await unwrap(
    api.GET('/data/{collection}/{indexName}/{indexValue}', {
      params: { path: { ...collection, indexName: '_id', indexValue: note._id } },
    }),
  );
  assert.deepEqual(byId, note);
  const bySlug = await unwrap(
    api.GET('/data/{collection}/{indexName}/{indexValue}', {
      params: { path: { ...collection, indexName: 'slug', indexValue: 'first' } },
    }),
  );
  assert.equal(bySlug._id, note._id);
  const done = await unwrap(
    api.PUT('/data/{collection}/{indexName}/{indexValue}', {
      params: { path: { ...collection, indexName: '_id', indexValue: note._id } },
      body: { values: { done: true, text: 'hello, world' } },
    }),
  );
  assert.equal(done.done, true);
  assert.equal(done.text, 'hello, world');
  assert.equal(done._createdAt, note._createdAt);
  await unwrap(
    api.POST('/data/{collection}', {
      params: { path: collection },
      body: { item: { text: 'second', done: false } },
    }),
  );
  const counted = await unwrap(
    api.GET('/data/{collection}/count', {
      params: { path: collection, query: { filter: { done: 'true' } } },
    }),
  );
  assert.equal(counted.count, 1);
  const listed = await unwrap(
    api.GET('/data/{collection}', {
      params: { path: collection, query: { sort: '_createdAt', sortOrder: 'asc' } },
    }),
  );
  assert.deepEqual(
    listed?.map((item) => item.text),
    ['hello, world', 'second'],
  );
  // Operators, a projection and a multi-field sort, typed by the document.
  const open = await unwrap(
    api.GET('/data/{collection}', {
      params: {
        path: collection,
        query: {
          filter: { text: { prefix: 'hello' }, done: { in: 'false,true' } },
          fields: 'text',
          sort: 'done,-text',
        },
      },
    }),
  );
  assert.deepEqual(open, [{ _id: note._id, text: 'hello, world' }]);
  // Bulk writes, an array operation and an aggregate, in a collection of their own.
  const tasks = { collection: 'tasks' };
  const created = await unwrap(
    api.POST('/data/{collection}/bulk', {
      params: { path: tasks },
      body: {
        items: [{ _id: 't1', state: 'open', tags: [] }, { state: 'done' }, { _createdAt: 'x' }],
      },
    }),
  );
  assert.deepEqual(
    created.results.map((r) => r.status),
    [200, 200, 400],
  );
  const tagged = await unwrap(
    api.PATCH('/data/{collection}/{indexName}/{indexValue}', {
      params: { path: { ...tasks, indexName: '_id', indexValue: 't1' } },
      body: { push: { field: 'tags', value: 'urgent' } },
    }),
  );
  assert.deepEqual(tagged.tags, ['urgent']);
  const states = await unwrap(
    api.GET('/data/{collection}/aggregate', {
      params: { path: tasks, query: { groupBy: 'state', op: 'count' } },
    }),
  );
  assert.deepEqual(states.groups, [
    { key: 'done', value: 1 },
    { key: 'open', value: 1 },
  ]);
  const closed = await unwrap(
    api.PUT('/data/{collection}', {
      params: { path: tasks },
      body: {
        filter: { state: { in: ['open', 'done'] } },
        values: { state: 'closed' },
        multi: true,
      },
    }),
  );
  assert.deepEqual(closed, { matched: 2, modified: 2 });
  await unwrap(
    api.DELETE('/data/{collection}', {
      params: { path: tasks },
      body: { filter: { state: 'closed' }, multi: true },
    }),
  );
  const collections = await unwrap(api.GET('/data'));
  assert.deepEqual(
    collections.map((c) => c.name),
    ['notes', 'tasks'],
  );
  const deleted = await api.DELETE('/data/{collection}/{indexName}/{indexValue}', {
    params: { path: { ...collection, indexName: '_id', indexValue: note._id } },
  });
  assert.equal(deleted.response.status, 204);
  expectProblem(
    await api.GET('/data/{collection}/{indexName}/{indexValue}', {
      params: { path: { ...collection, indexName: '_id', indexValue: note._id } },
    }),
    404,
    'ITEM_NOT_FOUND',
  );
  const remaining = await unwrap(
    api.GET('/data/{collection}/count', { params: { path: collection } }),
  );
  assert.equal(remaining.count, 1);
  // Nothing matches: 204 without a body, which the client gives as `undefined`.
  const none = await api.GET('/data/{collection}', {
    params: { path: collection, query: { filter: { text: 'nothing like this' } } },
  });
  assert.equal(none.response.status, 204);
  assert.equal(none.data, undefined);
}

/** A root user registers a sub profile and mints its key; the sub key manages its own settings. */
export async function subFlow(target: Target): Promise<void> {
  const { api: root, subject } = await newUser(target);
  const account = { clientId: 'mobile-app', accountId: unique('acct') };
  const subProfile = await unwrap(
    root.POST('/profile', {
      body: {
        ...account,
        email: `${account.accountId}@example.com`,
        userMetadata: { locale: 'en-GB' },
      },
    }),
  );
  assert.equal(subProfile.subject, subject);
  assert.equal(subProfile.accountId, account.accountId);
  const issued = await unwrap(root.POST('/api-keys', { body: { ...account, name: 'mobile app' } }));
  assert.equal(issued.key.kind, 'sub');
  assert.equal(issued.key.accountId, account.accountId);
  const keys = await unwrap(root.GET('/api-keys'));
  assert.ok(keys.some((k) => k.id === issued.key.id));

  const sub = createApiClient({ baseUrl: target.baseUrl, apiKey: issued.apiKey });
  const own = await unwrap(sub.GET('/profile'));
  assert.equal(own.id, subProfile.id);
  assert.deepEqual(own.settings, { userMetadata: { locale: 'en-GB' } });
  const edited = await unwrap(
    sub.PUT('/profile', { body: { settings: { theme: 'light', userMetadata: null } } }),
  );
  assert.deepEqual(edited.settings, { theme: 'light' });
  // Metadata is the root's to write; a sub key gets a 403 problem and nothing changes.
  expectProblem(
    await sub.PUT('/profile', { body: { metadata: { tier: 'gold' } } }),
    403,
    'FORBIDDEN',
  );
  expectProblem(await sub.GET('/project'), 403, 'FORBIDDEN');
  const seenByRoot = await unwrap(
    root.GET('/profile/{accountId}', {
      params: { path: { accountId: account.accountId }, query: { clientId: account.clientId } },
    }),
  );
  assert.deepEqual(seenByRoot.settings, { theme: 'light' });
  assert.deepEqual(seenByRoot.metadata, {});

  // Its data items are its own: stamped with its accountId, and it sees only those.
  await unwrap(
    root.POST('/data/{collection}', {
      params: { path: { collection: 'drafts' } },
      body: { item: { text: 'root' } },
    }),
  );
  const mine = await unwrap(
    sub.POST('/data/{collection}', {
      params: { path: { collection: 'drafts' } },
      body: { item: { text: 'sub' } },
    }),
  );
  assert.equal(mine.userId, account.accountId);
  const visible = await unwrap(
    sub.GET('/data/{collection}', { params: { path: { collection: 'drafts' } } }),
  );
  assert.deepEqual(
    visible?.map((item) => item.text),
    ['sub'],
  );
  const all = await unwrap(
    root.GET('/data/{collection}/count', { params: { path: { collection: 'drafts' } } }),
  );
  assert.equal(all.count, 2);
}

/** The operator creates a team and its key; the team works in its own namespace and a branch. */
export async function teamFlow(target: Target): Promise<void> {
  const operator = createApiClient({ baseUrl: target.baseUrl, apiKey: target.adminKey });
  const created = await unwrap(operator.POST('/admin/teams', { body: { name: unique('team') } }));
  assert.match(created.apiKey, /^pds_/);
  const team = createApiClient({ baseUrl: target.baseUrl, apiKey: created.apiKey });

  const project = await unwrap(team.POST('/project', { body: { name: 'Platform' } }));
  assert.equal(project.teamId, created.team.id);
  assert.equal(project.userId, '');
  assert.equal(project.branch, '');
  const task = await unwrap(
    team.POST('/data/{collection}', {
      params: { path: { collection: 'tasks' } },
      body: { item: { projectId: project.id, title: 'Ship it' }, uniqueField: 'title' },
    }),
  );
  assert.equal(task.userId, created.team.id);
  const duplicate = expectProblem(
    await team.POST('/data/{collection}', {
      params: { path: { collection: 'tasks' } },
      body: { item: { title: 'Ship it' }, uniqueField: 'title' },
    }),
    409,
    'DUPLICATE_ITEM',
  );
  assert.equal(duplicate.existingId, task._id);
  const index = await unwrap(
    team.POST('/data/{collection}/index', {
      params: { path: { collection: 'tasks' } },
      body: { field: 'projectId' },
    }),
  );
  assert.deepEqual(index.fields, { projectId: 1 });

  // A client bound to a branch sees only that branch.
  const staging = createApiClient({
    baseUrl: target.baseUrl,
    apiKey: created.apiKey,
    branch: 'staging',
  });
  const stagingProject = await unwrap(staging.POST('/project', { body: { name: 'Platform' } }));
  assert.equal(stagingProject.branch, 'staging');
  const standard = await unwrap(team.GET('/project'));
  assert.deepEqual(
    standard.map((p) => p.id),
    [project.id],
  );
  const inStaging = await unwrap(staging.GET('/project'));
  assert.deepEqual(
    inStaging.map((p) => p.id),
    [stagingProject.id],
  );
  expectProblem(await team.GET('/profile'), 403, 'FORBIDDEN');
  expectProblem(
    await createApiClient({
      baseUrl: target.baseUrl,
      apiKey: created.apiKey,
      branch: 'Not A Branch',
    }).GET('/project'),
    400,
    'INVALID_BRANCH',
  );
}
