import { createTestApp, type TestApp } from '../support/app';
import { anonymous, as, asOperator } from '../support/http';
import { createProject, createUser, type TestUser } from '../support/factories';
import { errorFields, expectInvalid, expectProblem } from '../support/problems';

let t: TestApp;
let user: TestUser;

beforeAll(async () => {
  t = await createTestApp(__filename);
  user = await createUser(t);
});

afterAll(async () => {
  await t.close();
});

describe('explicit null is a value, not an absent member', () => {
  it('returns 400 for a null subject when creating a user', async () => {
    const res = await asOperator(t).post('/admin/users', { email: 'n@x.com', subject: null });
    expectInvalid(res, 'subject');
  });

  it('returns 400 instead of minting a root key for null clientId and accountId', async () => {
    const res = await as(t, user).post('/api-keys', { clientId: null, accountId: null });
    expectInvalid(res, 'clientId', 'accountId');
    const keys = await as(t, user).get('/api-keys').expect(200);
    expect(keys.body).toHaveLength(1);
  });

  it.each(['name', 'branch', 'expiresAt'])(
    'returns 400 for a null %s of a new API key',
    async (field) => {
      expectInvalid(await as(t, user).post('/api-keys', { [field]: null }), field);
    },
  );

  it('returns 400 for null groups of a new sub profile', async () => {
    const res = await as(t, user).post('/profile', {
      accountId: 'acct-null',
      clientId: 'web',
      email: 'acct-null@example.com',
      groups: null,
    });
    expectInvalid(res, 'groups');
  });

  it.each([
    [{ field: 'status', sort: null }, 'sort'],
    [{ field: 'status', name: null }, 'name'],
    [{ field: 'status', unique: null }, 'unique'],
    [{ field: null }, 'field'],
  ])('returns 400 for a null member of an index definition %j', async (body, field) => {
    expectInvalid(await as(t, user).post('/data/nulls/index', body), field);
  });

  it('returns 400 for null fields of an index definition', async () => {
    expectProblem(
      await as(t, user).post('/data/nulls/index', { fields: null }),
      400,
      'VALIDATION_FAILED',
    );
  });

  it.each(['uniqueField', 'authField'])(
    'returns 400 for a null %s of a new item',
    async (field) => {
      expectInvalid(
        await as(t, user).post('/data/nulls', { item: { a: 1 }, [field]: null }),
        field,
      );
    },
  );

  it('returns 400 for a null project name on update', async () => {
    const project = await createProject(t, user);
    expectInvalid(await as(t, user).put(`/project/${project.id}`, { name: null }), 'name');
  });

  it('still accepts null where it is documented: avatar and data filter', async () => {
    await as(t, user).put('/profile', { avatar: null }).expect(200);
    await as(t, user)
      .post('/data/nulls', { item: { _id: 'n1', a: 1 } })
      .expect(200);
    const res = await as(t, user).put('/data/nulls/_id/n1', { values: { a: 2 }, filter: null });
    expect(res.status).toBe(200);
    expect(res.body.a).toBe(2);
  });
});

describe('dates are RFC 3339 strings', () => {
  const plansOf = (since: unknown, until: unknown = '2030-01-01T00:00:00Z') => [
    { planName: 'pro', since, until },
  ];

  it.each([false, true, 0, 1767225600000, '2030', '2026-02-30T00:00:00Z', 'Jan 2 2026', {}])(
    'returns 400 for plan since %j',
    async (since) => {
      const res = await asOperator(t).put(`/admin/users/${user.subject}/plans`, plansOf(since));
      expectInvalid(res, '0.since');
    },
  );

  it('returns 400 for a plan until that is not a string', async () => {
    const res = await asOperator(t).put(
      `/admin/users/${user.subject}/plans`,
      plansOf('2026-01-01T00:00:00Z', false),
    );
    expect(errorFields(res)).toEqual(['0.until']);
  });

  it('stores plan dates given with an offset as UTC instants', async () => {
    const res = await asOperator(t)
      .put(`/admin/users/${user.subject}/plans`, plansOf('2026-01-01T02:00:00+02:00'))
      .expect(200);
    expect(res.body.plans[0].since).toBe('2026-01-01T00:00:00.000Z');
  });

  it.each([false, true, 4102444800000, '2100', '2100-13-01T00:00:00Z'])(
    'returns 400 for API key expiresAt %j',
    async (expiresAt) => {
      expectInvalid(await as(t, user).post('/api-keys', { expiresAt }), 'expiresAt');
    },
  );

  it('accepts an RFC 3339 expiresAt', async () => {
    const res = await as(t, user)
      .post('/api-keys', { expiresAt: '2100-01-01T00:00:00+02:00' })
      .expect(200);
    expect(res.body.key.expiresAt).toBe('2099-12-31T22:00:00.000Z');
  });
});

describe('field names the database could not read back', () => {
  const unreadable = ['a"b', 'a\\b', 'a\nb', 'a\u0001b', 'a\u001fb', 'a\tb'];

  it.each(unreadable)(
    'returns 400 for item key %j and the collection stays readable',
    async (name) => {
      const res = await as(t, user).post('/data/names', { item: { ok: 1, [name]: 1 } });
      expectInvalid(res, `item.${name}`);
      const list = await as(t, user).get('/data/names');
      expect([200, 204]).toContain(list.status);
    },
  );

  it('names the path of an unreadable key at any depth', async () => {
    const res = await as(t, user).post('/data/names', { item: { a: { b: [{ 'x"y': 1 }] } } });
    expectInvalid(res, 'item.a.b[0].x"y');
  });

  it('still accepts other punctuation and non-ASCII names', async () => {
    const item = { "it's": 1, 'a/b': 2, 'ä ö': 3, '😀': 4, 'a\u007fb': 5 };
    await as(t, user)
      .post('/data/punct', { item: { _id: 'p1', ...item } })
      .expect(200);
    const res = await as(t, user).get('/data/punct/_id/p1').expect(200);
    expect(res.body).toMatchObject(item);
  });

  it('returns 400 for unreadable names in PUT values and body filters', async () => {
    await as(t, user)
      .post('/data/names', { item: { _id: 'n1', a: 1 } })
      .expect(200);
    expectInvalid(
      await as(t, user).put('/data/names/_id/n1', { values: { 'a\\b': 1 } }),
      'values.a\\b',
    );
    expectInvalid(
      await as(t, user).put('/data/names/_id/n1', { values: { a: 2 }, filter: { 'a"b': 1 } }),
      'filter.a"b',
    );
    expectInvalid(
      await as(t, user).delete('/data/names/_id/n1', { filter: { 'x.a\nb': 1 } }),
      'filter.x.a\nb',
    );
  });

  it('returns 400 for unreadable index fields', async () => {
    expectInvalid(await as(t, user).post('/data/names/index', { field: 'a"b' }), 'field');
    expectInvalid(
      await as(t, user).post('/data/names/index', { fields: { ok: 1, 'a\\b': 1 } }),
      'fields.a\\b',
    );
  });

  it('returns 400 for unreadable uniqueField and authField', async () => {
    const item = { item: { a: 1 } };
    expectInvalid(
      await as(t, user).post('/data/names', { ...item, uniqueField: 'a"b' }),
      'uniqueField',
    );
    expectInvalid(
      await as(t, user).post('/data/names', { ...item, authField: 'a\\b' }),
      'authField',
    );
    expectInvalid(
      await as(t, user).get('/data/names', { query: { authField: 'a"b' } }),
      'authField',
    );
  });

  it.each<Record<string, string>>([
    { sort: 'a"b' },
    { 'filter[a\\b]': '1' },
    { 'existsFilter[a\u0001b]': 'true' },
    { 'a"b': '1' },
    { sort: 'x.a\\b', 'after[x.a\\b]': '1' },
  ])('returns 400 for the query %j', async (query) => {
    expectProblem(await as(t, user).get('/data/names', { query }), 400, 'VALIDATION_FAILED');
  });

  it.each(['a"b', 'a\\b', 'line\nbreak', 'tab\there'])(
    'returns 400 for a profile settings or metadata key %j and keeps the profile readable',
    async (key) => {
      const settings = await as(t, user).put('/profile', { settings: { [key]: 1 } });
      expectInvalid(settings);
      const metadata = await as(t, user).put('/profile', { metadata: { [key]: 'x' } });
      expectInvalid(metadata);
      const profile = await as(t, user).get('/profile').expect(200);
      expect(Object.keys(profile.body.settings as object)).not.toContain(key);
    },
  );

  it('returns 400 for an unreadable {indexName} path segment', async () => {
    const res = await as(t, user).get(`/data/names/${encodeURIComponent('a"b')}/1`);
    expectInvalid(res, 'indexName');
  });
});

describe('a known path with another method', () => {
  it.each([
    ['TRACE', '/health', 'GET, HEAD'],
    ['PATCH', '/project/665f1c2a9b1e8a0012345678', 'DELETE, GET, HEAD, PUT'],
    ['PUT', '/data', 'GET, HEAD'],
    ['DELETE', '/project', 'GET, HEAD, POST'],
    ['OPTIONS', '/project', 'GET, HEAD, POST'],
  ])('answers %s %s with 405 and Allow: %s', async (method, path, allow) => {
    const res = await t.http()[method.toLowerCase() as 'get'](path).set('X-Api-Key', user.apiKey);
    expect(res.status).toBe(405);
    expect(res.headers.allow).toBe(allow);
    if (method !== 'OPTIONS') expectProblem(res, 405, 'METHOD_NOT_ALLOWED');
  });

  it('answers 405 before asking for a key', async () => {
    const res = await t.http().post('/data/names/_id/x');
    expectProblem(res, 405, 'METHOD_NOT_ALLOWED');
    expect(res.headers.allow).toBe('DELETE, GET, HEAD, PATCH, PUT');
  });

  it('keeps 404 for unknown paths, whatever the method', async () => {
    expectProblem(await anonymous(t).get('/nowhere'), 404, 'ROUTE_NOT_FOUND');
    const res = await t.http().patch('/nowhere/else');
    expectProblem(res, 404, 'ROUTE_NOT_FOUND');
    expect(res.headers.allow).toBeUndefined();
  });

  it('still serves HEAD where GET is served', async () => {
    await t.http().head('/health').expect(200);
  });
});

describe('found by the contract run (npm run test:contract)', () => {
  it.each([
    ['post', '/api-keys', 'null'],
    ['delete', '/data/notes/_id/x', 'null'],
    ['post', '/api-keys', '5'],
    ['delete', '/data/notes/_id/x', '"x"'],
  ] as const)(
    'returns 400 for a %s %s body of %s instead of treating it as absent',
    async (method, path, json) => {
      const res = await as(t, user).raw(method, path, json);
      expectProblem(res, 400, 'VALIDATION_FAILED');
      expect(res.body.errors).toEqual([{ field: '', message: 'the body must be a JSON object' }]);
    },
  );

  it('still accepts an optional body left out', async () => {
    await as(t, user).post('/api-keys').expect(200);
    await as(t, user).delete('/data/notes/_id/missing').expect(404);
  });

  it('answers GET /profile/groups with 405, not as the sub profile "groups"', async () => {
    const res = await as(t, user).get('/profile/groups');
    expectProblem(res, 405, 'METHOD_NOT_ALLOWED');
    expect(res.headers.allow).toBe('DELETE, PUT');
    const options = await t.http().options('/profile/groups').set('X-Api-Key', user.apiKey);
    expect(options.status).toBe(405);
    expect(options.headers.allow).toBe('DELETE, PUT');
  });

  it('keeps serving GET /profile/{accountId} for other names', async () => {
    expectProblem(await as(t, user).get('/profile/nobody'), 404, 'PROFILE_NOT_FOUND');
  });

  it.each(['ftp://example.com/a.png', 'https://exa mple.com/a.png', 'https://-x.com/', 'a:b'])(
    'refuses the avatar %j, which the documented pattern refuses too',
    async (avatar) => {
      expectInvalid(await as(t, user).put('/profile', { avatar }), 'avatar');
    },
  );

  it.each([
    [{ a: [[1]] }, 'item.a'],
    [{ a: { b: [1, ['x']] } }, 'item.a.b'],
    [{ a: [{ b: [[]] }] }, 'item.a[0].b'],
  ])('returns 400, not 500, for an array directly inside an array: %j', async (item, field) => {
    expectInvalid(await as(t, user).post('/data/nested', { item }), field);
  });

  it('returns 400, not 500, for nested arrays in PUT values', async () => {
    await as(t, user)
      .post('/data/nested', { item: { _id: 'n1', a: 1 } })
      .expect(200);
    expectInvalid(
      await as(t, user).put('/data/nested/_id/n1', { values: { a: [[1], 2] } }),
      'values.a',
    );
  });

  it('still stores arrays of objects holding arrays', async () => {
    const res = await as(t, user)
      .post('/data/nested', { item: { a: [{ b: [1, 2] }, 'x'] } })
      .expect(200);
    expect(res.body.a).toEqual([{ b: [1, 2] }, 'x']);
  });

  it('counts field-name lengths in characters, as the document does', async () => {
    const astral = '\u{1F600}'.repeat(200);
    await as(t, user)
      .post('/data/lengths', { item: { [astral]: 1 }, authField: astral })
      .expect(200);
    const tooLong = '\u{1F600}'.repeat(257);
    expectInvalid(
      await as(t, user).post('/data/lengths', { item: { a: 1 }, authField: tooLong }),
      'authField',
    );
  });
});
