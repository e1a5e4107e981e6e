import { createTestApp, TEST_ADMIN_KEY, type TestApp } from '../support/app';
import {
  createSubKey,
  createTeam,
  createUser,
  type TestSubProfile,
  type TestUser,
} from '../support/factories';

describe('data isolation and hostile input', () => {
  let t: TestApp;

  beforeAll(async () => {
    t = await createTestApp(__filename);
  });

  afterAll(async () => {
    await t.close();
  });

  const as = (key: string) => ({
    post: (path: string, body: unknown) =>
      t
        .http()
        .post(path)
        .set('X-Api-Key', key)
        .send(body as object),
    raw: (method: 'post' | 'put' | 'delete', path: string, json: string) =>
      t
        .http()
        [method](path)
        .set('X-Api-Key', key)
        .set('Content-Type', 'application/json')
        .send(json),
    get: (path: string) => t.http().get(path).set('X-Api-Key', key),
    put: (path: string, body: unknown) =>
      t
        .http()
        .put(path)
        .set('X-Api-Key', key)
        .send(body as object),
    del: (path: string, body?: unknown) => {
      const req = t.http().delete(path).set('X-Api-Key', key);
      return body === undefined ? req : req.send(body as object);
    },
  });

  /** Everything stored in a collection, read with the owner's key. */
  async function contents(key: string, collection: string): Promise<unknown[]> {
    const res = await as(key).get(`/data/${collection}?limit=500&sortOrder=asc`);
    return res.status === 204 ? [] : (res.body as unknown[]);
  }

  describe('tenants', () => {
    it('never see each other’s items or indexes in a collection of the same name', async () => {
      const ada = await createUser(t);
      const team = await createTeam(t);
      await as(ada.apiKey)
        .post('/data/shared', { item: { _id: 'x1', who: 'ada' } })
        .expect(200);
      await as(ada.apiKey).post('/data/shared/index', { field: 'who' }).expect(200);
      await as(team.apiKey)
        .post('/data/shared', { item: { _id: 'x1', who: 'team' } })
        .expect(200);

      expect((await as(team.apiKey).get('/data/shared/_id/x1').expect(200)).body.who).toBe('team');
      expect((await as(ada.apiKey).get('/data/shared/_id/x1').expect(200)).body.who).toBe('ada');
      expect((await as(team.apiKey).get('/data/shared/count').expect(200)).body.count).toBe(1);
      const teamIndexes = await as(team.apiKey).get('/data/shared/index').expect(200);
      expect(teamIndexes.body.map((i: { name: string }) => i.name)).toEqual(['_id_']);
      await as(team.apiKey).del('/data/shared/index', { name: 'who_1' }).expect(404);
      await as(team.apiKey).del('/data/shared/_id/x1').expect(204);
      expect((await as(ada.apiKey).get('/data/shared/_id/x1').expect(200)).body.who).toBe('ada');
    });
  });

  describe('sub callers', () => {
    let owner: TestUser;
    let alice: TestSubProfile;
    let bob: TestSubProfile;

    beforeAll(async () => {
      owner = await createUser(t);
      alice = await createSubKey(t, owner, { accountId: 'alice' });
      bob = await createSubKey(t, owner, { accountId: 'bob' });
      await as(alice.apiKey)
        .post('/data/inbox', { item: { _id: 'A1', text: 'alice private', userId: 'bob' } })
        .expect(200);
      await as(alice.apiKey)
        .post('/data/inbox', { item: { _id: 'A2', text: 'alice other', owner: 'alice' } })
        .expect(200);
      await as(bob.apiKey)
        .post('/data/inbox', { item: { _id: 'B1', text: 'from bob' } })
        .expect(200);
    });

    it('stamp their own owner value over the one in the body', async () => {
      const item = (await as(alice.apiKey).get('/data/inbox/_id/A1').expect(200)).body;
      expect(item.userId).toBe('alice');
      const custom = await as(alice.apiKey)
        .post('/data/inbox', { item: { _id: 'A3', mine: 'bob' }, authField: 'mine' })
        .expect(200);
      expect(custom.body.mine).toBe('alice');
    });

    it("cannot read another sub caller's items by any filter, authField or path", async () => {
      const b = as(bob.apiKey);
      const reads = [
        '/data/inbox/_id/A1',
        '/data/inbox/_id/A2',
        '/data/inbox/userId/alice',
        '/data/inbox/text/alice%20private',
        '/data/inbox/_id/A1?authField=owner',
        '/data/inbox/_id/A2?authField=owner',
        '/data/inbox/_id/A1?authField=text',
        '/data/inbox/_id/A1?userId=alice',
        '/data/inbox/_id/A1?existsFilter[userId]=false',
      ];
      for (const path of reads) {
        const res = await b.get(path);
        expect({ path, status: res.status }).toEqual({ path, status: 404 });
      }
      const lists = [
        '/data/inbox',
        '/data/inbox?userId=alice',
        '/data/inbox?authField=owner',
        '/data/inbox?authField=text',
        '/data/inbox?existsFilter[userId]=false',
        '/data/inbox?authField=nothing&existsFilter[nothing]=false',
      ];
      for (const path of lists) {
        const res = await b.get(path);
        const seen = res.status === 204 ? [] : res.body.map((i: { _id: string }) => i._id);
        expect({ path, seen }).toEqual({ path, seen: path === '/data/inbox' ? ['B1'] : [] });
        const count = await b.get(path.replace('/data/inbox', '/data/inbox/count'));
        expect({ path, count: count.body.count }).toEqual({
          path,
          count: path === '/data/inbox' ? 1 : 0,
        });
      }
    });

    it("cannot update or delete another sub caller's items", async () => {
      const b = as(bob.apiKey);
      const attempts: [string, object][] = [
        ['/data/inbox/_id/A1', {}],
        ['/data/inbox/_id/A2', { authField: 'owner' }],
        ['/data/inbox/userId/alice', {}],
        ['/data/inbox/_id/A1', { filter: { userId: 'alice' } }],
        ['/data/inbox/_id/A1', { authField: 'text', filter: { text: 'alice private' } }],
      ];
      for (const [path, extra] of attempts) {
        const update = await b.put(path, { values: { hacked: true }, ...extra });
        expect({ path, extra, status: update.status }).toEqual({ path, extra, status: 404 });
        const removal = await b.del(path, extra);
        expect({ path, extra, status: removal.status }).toEqual({ path, extra, status: 404 });
      }
      const root = await as(owner.apiKey).get('/data/inbox?sortOrder=asc').expect(200);
      expect(
        root.body.map((i: { _id: string; text: string; hacked?: boolean }) => [
          i._id,
          i.text,
          i.hacked,
        ]),
      ).toEqual([
        ['A1', 'alice private', undefined],
        ['A2', 'alice other', undefined],
        ['A3', undefined, undefined],
        ['B1', 'from bob', undefined],
      ]);
    });

    it('cannot change the owner field (403) and cannot manage indexes (403)', async () => {
      const a = as(alice.apiKey);
      const res = await a.put('/data/inbox/_id/A1', { values: { userId: 'bob' } }).expect(403);
      expect(res.body.code).toBe('FORBIDDEN');
      await a.put('/data/inbox/_id/A2', { values: { owner: 'x' }, authField: 'owner' }).expect(403);
      await a.get('/data/inbox/index').expect(403);
      await a.post('/data/inbox/index', { field: 'text' }).expect(403);
      await a.del('/data/inbox/index', { name: '_id_' }).expect(403);
      expect((await a.get('/data/inbox/_id/A1').expect(200)).body.userId).toBe('alice');
    });

    it('update and delete their own items', async () => {
      const a = as(alice.apiKey);
      const res = await a.put('/data/inbox/_id/A1', { values: { text: 'edited' } }).expect(200);
      expect(res.body).toMatchObject({ text: 'edited', userId: 'alice' });
      await a.del('/data/inbox/_id/A3', { authField: 'mine' }).expect(204);
    });

    it("list the collections of their user's namespace", async () => {
      const res = await as(bob.apiKey).get('/data').expect(200);
      expect(res.body.map((c: { name: string }) => c.name)).toEqual(['inbox']);
    });

    it('are seen by the root caller, who owns the namespace', async () => {
      const item = await as(owner.apiKey).get('/data/inbox/_id/B1').expect(200);
      expect(item.body.userId).toBe('bob');
    });
  });

  it('refuses the operator key on data routes with 403', async () => {
    await t.http().get('/data').set('X-Api-Key', TEST_ADMIN_KEY).expect(403);
    await t.http().post('/data/x').set('X-Api-Key', TEST_ADMIN_KEY).send({ item: {} }).expect(403);
  });

  describe('operator-shaped input', () => {
    let user: TestUser;

    beforeAll(async () => {
      user = await createUser(t);
      await as(user.apiKey)
        .post('/data/safe', { item: { _id: 'S1', a: 1, b: 'x' } })
        .expect(200);
    });

    const expectUnchanged = async () => {
      expect(await contents(user.apiKey, 'safe')).toEqual([
        expect.objectContaining({ _id: 'S1', a: 1, b: 'x' }),
      ]);
      expect((await contents(user.apiKey, 'safe'))[0]).not.toHaveProperty('c');
    };

    it('refuses $ keys, dotted keys and reserved names in items with 400', async () => {
      const u = as(user.apiKey);
      for (const item of [
        { a: { $ne: null } },
        { $where: 'sleep(1000)' },
        { 'a.b': 1 },
        { nested: { deep: { $gt: 1 } } },
        { list: [{ $set: 1 }] },
        { constructor: 1 },
        { prototype: {} },
        { _bsontype: 'ObjectId' },
        { 'nul\u0000key': 1 },
        { '': 1 },
      ]) {
        const res = await u.post('/data/safe', { item: { ...item, _id: 'S2' } });
        expect({ item, status: res.status }).toEqual({ item, status: 400 });
      }
      await expectUnchanged();
    });

    it('refuses __proto__ keys sent as raw JSON anywhere in the body with 400', async () => {
      const u = as(user.apiKey);
      const bodies: ['post' | 'put' | 'delete', string, string][] = [
        ['post', '/data/safe', '{"item":{"__proto__":{"c":1},"_id":"S3"}}'],
        ['post', '/data/safe', '{"item":{"deep":{"__proto__":{"c":1}},"_id":"S3"}}'],
        ['post', '/data/safe', '{"__proto__":{"c":1},"item":{"_id":"S3"}}'],
        ['put', '/data/safe/_id/S1', '{"values":{"__proto__":{"c":1}}}'],
        ['put', '/data/safe/_id/S1', '{"values":{"c":1},"__proto__":{"x":1}}'],
        ['put', '/data/safe/_id/S1', '{"values":{"c":1},"filter":{"__proto__":1}}'],
        ['delete', '/data/safe/_id/S1', '{"filter":{"__proto__":{"a":1}}}'],
      ];
      for (const [method, path, json] of bodies) {
        const res = await u.raw(method, path, json);
        expect({ json, status: res.status }).toEqual({ json, status: 400 });
      }
      await expectUnchanged();
    });

    it("answers the body's problems first and alone, then the DTO's, then the item's own", async () => {
      const u = as(user.apiKey);
      const errors = async (
        method: 'post' | 'put' | 'delete',
        path: string,
        json: string,
      ): Promise<unknown> => {
        const res = await u.raw(method, path, json);
        expect({ json: json.slice(0, 80), status: res.status }).toEqual({
          json: json.slice(0, 80),
          status: 400,
        });
        return res.body.errors;
      };
      // A prototype key anywhere is the body's problem: it is answered without the others.
      expect(
        await errors(
          'post',
          '/data/safe',
          '{"item":{"$x":1,"a":{"__proto__":1}},"uniqueField":5,"onConflict":"no"}',
        ),
      ).toEqual([
        { field: 'item.a.__proto__', message: "field name '__proto__' is a reserved name" },
      ]);
      // A DTO problem (uniqueField not a string) comes before the item's own problems.
      expect(
        await errors('post', '/data/safe', '{"item":{"$x":1,"a.b":2},"uniqueField":5}'),
      ).toEqual([
        {
          field: 'uniqueField',
          message: 'uniqueField must be shorter than or equal to 256 characters',
        },
        { field: 'uniqueField', message: 'uniqueField must be a string' },
      ]);
      // The item's own problems, all of them, in document order; then the body's other members.
      expect(
        await errors(
          'post',
          '/data/safe',
          '{"item":{"$x":1,"b":[[1]],"c":{"a.b":2}},"uniqueField":"$u"}',
        ),
      ).toEqual([
        { field: 'item.$x', message: "field name must not start with '$'" },
        {
          field: 'item.b',
          message:
            'must not hold an array directly inside an array (wrap the inner one in an object)',
        },
        { field: 'item.c.a.b', message: "field name must not contain '.'" },
      ]);
      expect(await errors('post', '/data/safe', '{"item":{"a":1},"uniqueField":"$u"}')).toEqual([
        { field: 'uniqueField', message: "must not start with '$'" },
      ]);
      // PUT by filter reads the filter first, PUT of one item its values first.
      const change = '{"values":{"$v":1},"filter":{"a..b":1}}';
      expect(await errors('put', '/data/safe', change)).toEqual([
        { field: 'filter.a..b', message: "field path segment '' must not be empty" },
      ]);
      expect(await errors('put', '/data/safe/_id/S1', change)).toEqual([
        { field: 'values.$v', message: "field name must not start with '$'" },
      ]);
      // Over the item's node budget (100,000) but within the body's (200,000): the item's problem.
      const numbers = (count: number) => `[${new Array<string>(count).fill('0').join(',')}]`;
      expect(await errors('post', '/data/safe', `{"item":{"a":${numbers(100_000)}}}`)).toEqual([
        { field: 'item', message: 'has more than 100000 values and keys' },
      ]);
      // Over both: the body's, alone, even with a DTO problem beside it.
      expect(
        await errors('post', '/data/safe', `{"item":{"a":${numbers(200_000)}},"uniqueField":5}`),
      ).toEqual([{ field: 'body', message: 'has more than 200000 values and keys' }]);
      await expectUnchanged();
    });

    it('refuses operators in values and filters with 400', async () => {
      const u = as(user.apiKey);
      const updates = [
        { values: { $set: { c: 1 } } },
        { values: { c: 1, 'a.b': 2 } },
        { values: { c: { $inc: 1 } } },
        { values: { c: 1 }, filter: { a: { $ne: null } } },
        { values: { c: 1 }, filter: { $where: 'true' } },
        { values: { c: 1 }, filter: { $or: [{ a: 1 }] } },
        { values: { c: 1 }, filter: { a: [1] } },
        { values: { c: 1 }, filter: 'a' },
        { values: { c: 1 }, authField: '$where' },
        { values: { c: 1 }, authField: 'a.b' },
      ];
      for (const body of updates) {
        const res = await u.put('/data/safe/_id/S1', body);
        expect({ body, status: res.status }).toEqual({ body, status: 400 });
      }
      for (const body of [
        { filter: { a: { $gt: 0 } } },
        { filter: { $expr: 1 } },
        { authField: '__proto__' },
      ]) {
        const res = await u.del('/data/safe/_id/S1', body);
        expect({ body, status: res.status }).toEqual({ body, status: 400 });
      }
      await expectUnchanged();
    });

    it('refuses operator-shaped query strings with 400', async () => {
      const u = as(user.apiKey);
      for (const query of [
        'a[$gt]=0',
        'a[$ne]=null',
        '$where=1',
        'filter[$or]=1',
        'existsFilter[$a]=true',
        'authField=$where',
        'sort=a.$b',
        'a.__proto__.b=1',
      ]) {
        const list = await u.get(`/data/safe?${query}`);
        expect({ query, status: list.status }).toEqual({ query, status: 400 });
        const one = await u.get(`/data/safe/_id/S1?${query}`);
        expect({ query, status: one.status }).toEqual({ query, status: 400 });
      }
    });

    it('refuses items nested deeper than the budget with 400', async () => {
      let deep: object = { leaf: 1 };
      for (let i = 0; i < 25; i += 1) deep = { d: deep };
      const res = await as(user.apiKey).post('/data/safe', { item: { _id: 'S4', deep } });
      expect(res.status).toBe(400);
      expect(res.body.errors[0].message).toContain('deeper');
      let fits: object = { leaf: 1 };
      for (let i = 0; i < 18; i += 1) fits = { d: fits };
      await as(user.apiKey)
        .post('/data/fits', { item: { deep: fits } })
        .expect(200);
      await expectUnchanged();
    });
  });

  describe('collection names', () => {
    let user: TestUser;

    beforeAll(async () => {
      user = await createUser(t);
    });

    it('refuses names outside the pattern with 400', async () => {
      const u = as(user.apiKey);
      for (const name of [
        'system.profile',
        encodeURIComponent('../x'),
        '..%2F..%2Fadmin',
        'a$b',
        '1abc',
        '_x',
        'a'.repeat(65),
        'a%00b',
        '%24cmd',
      ]) {
        const res = await u.post(`/data/${name}`, { item: { a: 1 } });
        expect({ name, status: res.status, code: res.body.code }).toEqual({
          name,
          status: 400,
          code: 'INVALID_COLLECTION_NAME',
        });
        expect((await u.get(`/data/${name}`)).status).toBe(400);
      }
      await u.post(`/data/${'a'.repeat(64)}`, { item: { a: 1 } }).expect(200);
    });

    it("keeps a tenant's collections named like the service's own apart from them", async () => {
      const u = as(user.apiKey);
      const before = {
        profiles: await t.connection.collection('profiles').countDocuments(),
        api_keys: await t.connection.collection('api_keys').countDocuments(),
        users: await t.connection.collection('users').countDocuments(),
        teams: await t.connection.collection('teams').countDocuments(),
      };
      const registryBefore = await t.connection.collection('data_collections').countDocuments();
      for (const name of ['profiles', 'api_keys', 'users', 'teams', 'data_collections']) {
        await u.post(`/data/${name}`, { item: { _id: 'mine', planted: true } }).expect(200);
        const list = await u.get(`/data/${name}`).expect(200);
        expect(list.body.map((i: { _id: string }) => i._id)).toEqual(['mine']);
        await u.put(`/data/${name}/_id/mine`, { values: { touched: true } }).expect(200);
      }
      expect({
        profiles: await t.connection.collection('profiles').countDocuments(),
        api_keys: await t.connection.collection('api_keys').countDocuments(),
        users: await t.connection.collection('users').countDocuments(),
        teams: await t.connection.collection('teams').countDocuments(),
      }).toEqual(before);
      expect(await t.connection.collection('profiles').findOne({ planted: true })).toBeNull();
      expect(
        await t.connection.collection('data_collections').countDocuments({ planted: true }),
      ).toBe(0);
      expect(await t.connection.collection('data_collections').countDocuments()).toBe(
        registryBefore + 5,
      );
      // The user's own root profile is intact and their key still works.
      await t.http().get('/api-keys').set('X-Api-Key', user.apiKey).expect(200);
    });
  });
});
