import { createTestApp, type TestApp } from '../support/app';
import { createTeam, createUser, type TestUser } from '../support/factories';

describe('data indexes', () => {
  let t: TestApp;
  let user: TestUser;

  beforeAll(async () => {
    t = await createTestApp(__filename, { MAX_INDEXES: '3' });
    user = await createUser(t);
  });

  afterAll(async () => {
    await t.close();
  });

  const post = (path: string, body: object, key = user.apiKey) =>
    t.http().post(path).set('X-Api-Key', key).send(body);
  const get = (path: string, key = user.apiKey) => t.http().get(path).set('X-Api-Key', key);
  const del = (path: string, body: object, key = user.apiKey) =>
    t.http().delete(path).set('X-Api-Key', key).send(body);

  describe('GET /data/{c}/index', () => {
    it('returns no indexes for a collection that does not exist, without creating it', async () => {
      expect((await get('/data/absent/index').expect(200)).body).toEqual([]);
      await get('/data/absent').expect(204);
      expect((await get('/data').expect(200)).body).toEqual([]);
    });

    it('lists _id_ first with the created indexes', async () => {
      await post('/data/listed', { item: {} }).expect(200);
      await post('/data/listed/index', { field: 'b', sort: 'desc' }).expect(200);
      expect((await get('/data/listed/index').expect(200)).body).toEqual([
        { name: '_id_', fields: { _id: 1 }, unique: true },
        { name: 'b_-1', fields: { b: -1 }, unique: false },
      ]);
    });

    it('works for a collection literally named index or count', async () => {
      await post('/data/index', { item: { _id: 'i' } }).expect(200);
      await post('/data/count', { item: { _id: 'c' } }).expect(200);
      expect((await get('/data/index/index').expect(200)).body[0].name).toBe('_id_');
      expect((await get('/data/count/count').expect(200)).body).toEqual({ count: 1 });
      expect((await get('/data/index').expect(200)).body[0]._id).toBe('i');
      expect((await get('/data/index/_id/i').expect(200)).body._id).toBe('i');
    });
  });

  describe('POST /data/{c}/index', () => {
    it('creates an index (and the collection) with MongoDB’s default name', async () => {
      const res = await post('/data/fresh/index', { fields: { f: 1, g: -1 } }).expect(200);
      expect(res.body).toEqual({ name: 'f_1_g_-1', fields: { f: 1, g: -1 }, unique: false });
      expect((await get('/data').expect(200)).body.map((c: { name: string }) => c.name)).toContain(
        'fresh',
      );
    });

    it('is a no-op returning the index when the same index exists', async () => {
      await post('/data/same/index', { field: 'a', unique: true }).expect(200);
      const again = await post('/data/same/index', { field: 'a', unique: true }).expect(200);
      expect(again.body).toEqual({ name: 'a_1', fields: { a: 1 }, unique: true });
      const named = await post('/data/same/index', {
        fields: { a: 1 },
        unique: true,
        name: 'a_1',
      }).expect(200);
      expect(named.body.name).toBe('a_1');
      expect((await get('/data/same/index').expect(200)).body).toHaveLength(2);
    });

    it('returns 409 for the same name with another definition, or the same fields again', async () => {
      await post('/data/conflicts/index', { field: 'a', name: 'idx' }).expect(200);
      for (const body of [
        { field: 'b', name: 'idx' },
        { field: 'a', unique: true, name: 'idx' },
        { field: 'a', sort: 'desc', name: 'idx' },
        { field: 'a', name: 'other' },
        { field: 'a', unique: true },
      ]) {
        const res = await post('/data/conflicts/index', body);
        expect({ body, status: res.status, code: res.body.code }).toEqual({
          body,
          status: 409,
          code: 'INDEX_CONFLICT',
        });
      }
      expect((await get('/data/conflicts/index').expect(200)).body).toHaveLength(2);
    });

    it('returns 409 when existing duplicates prevent a unique index', async () => {
      await post('/data/dupes', { item: { email: 'x@example.com' } }).expect(200);
      await post('/data/dupes', { item: { email: 'x@example.com' } }).expect(200);
      const res = await post('/data/dupes/index', { field: 'email', unique: true }).expect(409);
      expect(res.body.code).toBe('UNIQUE_INDEX_DUPLICATES');
      expect((await get('/data/dupes/index').expect(200)).body).toHaveLength(1);
    });

    it('returns 400 for bad index definitions', async () => {
      for (const body of [
        {},
        { field: 'a', fields: { a: 1 } },
        { fields: {} },
        { fields: { a: 1, b: 1, c: 1, d: 1, e: 1, f: 1 } },
        { fields: { a: 2 } },
        { fields: { a: '1' } },
        { fields: { $a: 1 } },
        { fields: [1] },
        { field: '$where' },
        { field: 'a..b' },
        { field: 'a', sort: 'up' },
        { fields: { a: 1 }, sort: 'asc' },
        { field: 'a', name: '$bad' },
        { field: 'a', partialFilterExpression: { a: 1 } },
        { field: 'a', expireAfterSeconds: 10 },
      ]) {
        const res = await post('/data/bad/index', body);
        expect({ body, status: res.status }).toEqual({ body, status: 400 });
      }
    });

    it('returns 409 beyond the index quota (_id not counted)', async () => {
      for (const field of ['a', 'b', 'c']) await post('/data/quota/index', { field }).expect(200);
      const res = await post('/data/quota/index', { field: 'd' }).expect(409);
      expect(res.body.code).toBe('INDEX_QUOTA_EXCEEDED');
      // Re-creating an existing index is still a no-op at the quota.
      await post('/data/quota/index', { field: 'a' }).expect(200);
    });

    it('is allowed to team keys (sub keys: see data-security)', async () => {
      const team = await createTeam(t);
      await post('/data/teamed/index', { field: 'a' }, team.apiKey).expect(200);
      expect((await get('/data/teamed/index', team.apiKey).expect(200)).body).toHaveLength(2);
    });
  });

  describe('DELETE /data/{c}/index', () => {
    it('drops an index', async () => {
      await post('/data/dropping/index', { field: 'a' }).expect(200);
      await del('/data/dropping/index', { name: 'a_1' }).expect(204);
      expect((await get('/data/dropping/index').expect(200)).body).toHaveLength(1);
    });

    it('returns 400 for _id_ and 404 for an unknown index or collection', async () => {
      await post('/data/dropping2', { item: {} }).expect(200);
      expect((await del('/data/dropping2/index', { name: '_id_' }).expect(400)).body.code).toBe(
        'PROTECTED_INDEX',
      );
      expect((await del('/data/dropping2/index', { name: 'nope' }).expect(404)).body.code).toBe(
        'INDEX_NOT_FOUND',
      );
      await del('/data/neverThere/index', { name: 'a_1' }).expect(404);
      await del('/data/dropping2/index', {}).expect(400);
    });
  });

  describe('unique indexes and updates', () => {
    it('returns 409 and changes nothing when an update would break a unique index', async () => {
      await post('/data/uniq/index', { field: 'code', unique: true }).expect(200);
      await post('/data/uniq', { item: { _id: 'u1', code: 'A' } }).expect(200);
      await post('/data/uniq', { item: { _id: 'u2', code: 'B' } }).expect(200);
      const res = await t
        .http()
        .put('/data/uniq/_id/u2')
        .set('X-Api-Key', user.apiKey)
        .send({ values: { code: 'A' } })
        .expect(409);
      expect(res.body.code).toBe('DUPLICATE_ITEM');
      expect((await get('/data/uniq/_id/u2').expect(200)).body.code).toBe('B');
    });
  });

  describe('uniqueField with a unique index', () => {
    it('lets exactly one of 20 concurrent creates of the same value through', async () => {
      await post('/data/race/index', { field: 'code', unique: true }).expect(200);
      const results = await Promise.all(
        Array.from({ length: 20 }, (_, i) =>
          post('/data/race', { item: { code: 'SAME', attempt: i }, uniqueField: 'code' }),
        ),
      );
      const statuses = results.map((r) => r.status).sort();
      expect(statuses).toEqual([200, ...Array<number>(19).fill(409)]);
      const winner = results.find((r) => r.status === 200)!.body._id;
      for (const loser of results.filter((r) => r.status === 409)) {
        expect(loser.body).toMatchObject({ code: 'DUPLICATE_ITEM', existingId: winner });
      }
      expect((await get('/data/race/count?code=SAME').expect(200)).body.count).toBe(1);
    });
  });
});
