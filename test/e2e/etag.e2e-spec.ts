import { MongoClient, ObjectId } from 'mongodb';
import type { Response, Test } from 'supertest';
import {
  createTestApp,
  nativeCollection,
  testDatabaseUri,
  TEST_ADMIN_KEY,
  uniqueDbName,
  type TestApp,
} from '../support/app';
import { mongoOnly } from '../support/database-server';
import { createSubKey, createUser, type TestUser } from '../support/factories';
import { as, asOperator } from '../support/http';
import { errorFields, expectInvalid, expectProblem } from '../support/problems';
import { startService, type Reply, type ServiceProcess } from '../support/service-process';

/**
 * Conditional requests on profiles, projects and data items: a strong ETag on every
 * single-resource read and write, 304 for If-None-Match, If-Match writes that are conditional
 * on the revision (412 otherwise), and no lost update under concurrency.
 */

let t: TestApp;
let user: TestUser;

beforeAll(async () => {
  t = await createTestApp(__filename);
  user = await createUser(t);
});

afterAll(async () => {
  await t.close();
});

const STRONG_TAG = /^"[0-9A-Za-z]+\.[0-9]+"$/;
const CONCURRENT = 20;

type Headers = Record<string, string>;

/** One resource of a kind, and the requests on it that the tests share. */
interface Resource {
  /** The ETag its create answered with. */
  createdTag: string;
  read(headers?: Headers): Test;
  /** A write that changes the resource (`i` makes the change distinct). */
  update(i: number, headers?: Headers): Test;
  remove?(headers?: Headers): Test;
}

interface Kind {
  name: string;
  create(): Promise<Resource>;
  /** A write to a resource of this kind that does not exist. */
  updateMissing(headers?: Headers): Test;
}

function etagOf(res: Response): string {
  const etag = res.headers.etag;
  expect(etag).toMatch(STRONG_TAG);
  return etag as string;
}

let counter = 0;
const unique = (prefix: string) => `${prefix}-${Date.now().toString(36)}-${counter++}`;

/** A sub profile, created and then addressed by its root with clientId and accountId. */
const profiles: Kind = {
  name: 'profiles',
  async create() {
    const accountId = unique('acct');
    const query = { clientId: 'etag-client', accountId };
    const created = await as(t, user)
      .post('/profile', { ...query, email: `${accountId}@example.com` })
      .expect(200);
    return {
      createdTag: etagOf(created),
      read: (headers) => as(t, user).get('/profile', { query, headers }),
      update: (i, headers) =>
        as(t, user).put('/profile', { settings: { n: i } }, { query, headers }),
    };
  },
  updateMissing: (headers) =>
    as(t, user).put(
      '/profile',
      { settings: { n: 1 } },
      { query: { clientId: 'etag-client', accountId: 'nobody' }, headers },
    ),
};

const projects: Kind = {
  name: 'projects',
  async create() {
    const created = await as(t, user)
      .post('/project', { name: unique('project') })
      .expect(200);
    const path = `/project/${created.body.id as string}`;
    return {
      createdTag: etagOf(created),
      read: (headers) => as(t, user).get(path, { headers }),
      update: (i, headers) => as(t, user).put(path, { name: `name ${i}` }, { headers }),
      remove: (headers) => as(t, user).delete(path, undefined, { headers }),
    };
  },
  updateMissing: (headers) =>
    as(t, user).put(`/project/${new ObjectId().toHexString()}`, { name: 'x' }, { headers }),
};

const items: Kind = {
  name: 'data items',
  async create() {
    const created = await as(t, user)
      .post('/data/notes', { item: { n: 0 } })
      .expect(200);
    const path = `/data/notes/_id/${created.body._id as string}`;
    return {
      createdTag: etagOf(created),
      read: (headers) => as(t, user).get(path, { headers }),
      update: (i, headers) => as(t, user).put(path, { values: { n: i } }, { headers }),
      remove: (headers) => as(t, user).delete(path, undefined, { headers }),
    };
  },
  updateMissing: (headers) =>
    as(t, user).put('/data/notes/_id/no-such-item', { values: { n: 1 } }, { headers }),
};

describe.each([profiles, projects, items])('$name', (kind) => {
  it('tags every read and write with a strong ETag that only writes change', async () => {
    const resource = await kind.create();
    const first = etagOf(await resource.read().expect(200));
    expect(first).toBe(resource.createdTag);
    expect(etagOf(await resource.read().expect(200))).toBe(first);

    const written = etagOf(await resource.update(1).expect(200));
    expect(written).not.toBe(first);
    expect(etagOf(await resource.read().expect(200))).toBe(written);
    const again = etagOf(await resource.update(2).expect(200));
    expect(new Set([first, written, again]).size).toBe(3);
  });

  it('answers 304 without a body to If-None-Match naming the current ETag', async () => {
    const resource = await kind.create();
    const etag = etagOf(await resource.read().expect(200));
    for (const ifNoneMatch of [etag, `W/${etag}`, `"other.1", ${etag}`, '*']) {
      const res = await resource.read({ 'If-None-Match': ifNoneMatch }).expect(304);
      expect(res.headers.etag).toBe(etag);
      expect(res.text).toBeFalsy();
    }
    await resource.update(1).expect(200);
    const fresh = await resource.read({ 'If-None-Match': etag }).expect(200);
    expect(etagOf(fresh)).not.toBe(etag);
  });

  it('writes under a matching If-Match and answers 412 with the current ETag otherwise', async () => {
    const resource = await kind.create();
    const stale = etagOf(await resource.read().expect(200));
    const current = etagOf(await resource.update(1).expect(200));

    for (const ifMatch of [stale, `W/${current}`, '"unrelated.7"']) {
      const refused = await resource.update(2, { 'If-Match': ifMatch });
      expectProblem(refused, 412, 'PRECONDITION_FAILED');
      expect(refused.headers.etag).toBe(current);
    }
    expect(etagOf(await resource.read().expect(200))).toBe(current);

    const matched = await resource.update(3, { 'If-Match': `${stale}, ${current}` }).expect(200);
    expect(etagOf(matched)).not.toBe(current);
    await resource.update(4, { 'If-Match': '*' }).expect(200);
  });

  it('answers 412 without an ETag to If-Match on a resource that does not exist', async () => {
    for (const ifMatch of ['*', '"665f1c2a9b1e8a0012345678.0"']) {
      const res = await kind.updateMissing({ 'If-Match': ifMatch });
      expectProblem(res, 412, 'PRECONDITION_FAILED');
      expect(res.headers.etag).toBeUndefined();
    }
    expect((await kind.updateMissing()).status).toBe(404);
  });

  it(`lets exactly one of ${CONCURRENT} concurrent PUTs with the same If-Match through`, async () => {
    const resource = await kind.create();
    const etag = etagOf(await resource.read().expect(200));
    const responses = await Promise.all(
      Array.from({ length: CONCURRENT }, (_, i) => resource.update(i + 1, { 'If-Match': etag })),
    );
    const statuses = responses.map((r) => r.status).sort();
    expect(statuses).toEqual([200, ...Array<number>(CONCURRENT - 1).fill(412)]);
    const winner = etagOf(responses.find((r) => r.status === 200)!);
    for (const refused of responses.filter((r) => r.status === 412)) {
      expect(refused.headers.etag).toBe(winner);
    }
    expect(etagOf(await resource.read().expect(200))).toBe(winner);
  });

  it('refuses malformed conditional headers, and If-None-Match on a write, with 400', async () => {
    const resource = await kind.create();
    const unquoted = await resource.update(1, { 'If-Match': 'abc.1' });
    expectInvalid(unquoted, 'If-Match');
    expectInvalid(await resource.update(1, { 'If-None-Match': '*' }), 'If-None-Match');
    expectInvalid(await resource.read({ 'If-None-Match': 'abc.1' }), 'If-None-Match');
    expect(errorFields(unquoted)).toEqual(['If-Match']);
    expect(etagOf(await resource.read().expect(200))).toBe(resource.createdTag);
  });
});

describe.each([projects, items])('deleting $name', (kind) => {
  it('deletes under a matching If-Match only, and 412s a stale one leaving the resource', async () => {
    const resource = await kind.create();
    const stale = resource.createdTag;
    const current = etagOf(await resource.update(1).expect(200));
    const refused = await resource.remove!({ 'If-Match': stale });
    expectProblem(refused, 412, 'PRECONDITION_FAILED');
    expect(refused.headers.etag).toBe(current);
    await resource.read().expect(200);

    await resource.remove!({ 'If-Match': current }).expect(204);
    await resource.read().expect(404);
    expectProblem(await resource.remove!({ 'If-Match': '*' }), 412, 'PRECONDITION_FAILED');
  });
});

describe('profiles', () => {
  it('moves the ETag with group and plan changes, and makes group changes conditional', async () => {
    const owner = await createUser(t);
    const tag0 = etagOf(await as(t, owner).get('/profile').expect(200));
    const added = await as(t, owner).put('/profile/groups', { group: 'editors' }).expect(200);
    const tag1 = etagOf(added);
    expect(tag1).not.toBe(tag0);
    // A no-op keeps the tag, also under a matching If-Match.
    const noop = await as(t, owner)
      .put('/profile/groups', { group: 'editors' }, { headers: { 'If-Match': tag1 } })
      .expect(200);
    expect(etagOf(noop)).toBe(tag1);
    const stale = await as(t, owner).delete(
      '/profile/groups',
      { group: 'editors' },
      { headers: { 'If-Match': tag0 } },
    );
    expectProblem(stale, 412, 'PRECONDITION_FAILED');
    expect(stale.headers.etag).toBe(tag1);
    const removed = await as(t, owner)
      .delete('/profile/groups', { group: 'editors' }, { headers: { 'If-Match': tag1 } })
      .expect(200);
    expect(removed.body.groups).toEqual([]);
    const tag2 = etagOf(removed);

    await asOperator(t)
      .put(`/admin/users/${owner.subject}/plans`, [
        { planName: 'pro', since: '2026-01-01T00:00:00Z', until: '2027-01-01T00:00:00Z' },
      ])
      .expect(200);
    const tag3 = etagOf(await as(t, owner).get('/profile').expect(200));
    expect(new Set([tag0, tag1, tag2, tag3]).size).toBe(4);
  });

  it('tags a sub profile alike at /profile/{accountId}, also one stored without a revision', async () => {
    const owner = await createUser(t);
    // The factory writes the profile document directly, without the revision field.
    const sub = await createSubKey(t, owner);
    const own = etagOf(await as(t, sub).get('/profile').expect(200));
    expect(own).toBe(`"${sub.profileId}.0"`);
    const byAccount = await as(t, owner)
      .get(`/profile/${sub.accountId}`, { query: { clientId: sub.clientId } })
      .expect(200);
    expect(byAccount.headers.etag).toBe(own);
    await as(t, owner)
      .get(`/profile/${sub.accountId}`, { headers: { 'If-None-Match': own } })
      .expect(304);
    const updated = await as(t, sub)
      .put('/profile', { settings: { theme: 'dark' } }, { headers: { 'If-Match': own } })
      .expect(200);
    expect(updated.headers.etag).toBe(`"${sub.profileId}.1"`);
  });

  it('tags the root profiles of two users differently at the same URL', async () => {
    const other = await createUser(t);
    const mine = etagOf(await as(t, user).get('/profile').expect(200));
    const theirs = etagOf(await as(t, other).get('/profile').expect(200));
    expect(mine).not.toBe(theirs);
    expectProblem(
      await as(t, other).put('/profile', { avatar: '' }, { headers: { 'If-Match': mine } }),
      412,
      'PRECONDITION_FAILED',
    );
  });
});

describe('projects', () => {
  it('counts a project stored without a revision as revision 0', async () => {
    const _id = new ObjectId();
    const now = new Date();
    await t.connection.collection('projects').insertOne({
      _id,
      userId: user.subject,
      teamId: '',
      branch: '',
      name: 'legacy',
      tags: [],
      createdAt: now,
      updatedAt: now,
    });
    const path = `/project/${_id.toHexString()}`;
    const read = etagOf(await as(t, user).get(path).expect(200));
    expect(read).toBe(`"${_id.toHexString()}.0"`);
    const written = await as(t, user)
      .put(path, { name: 'renamed' }, { headers: { 'If-Match': read } })
      .expect(200);
    expect(written.headers.etag).toBe(`"${_id.toHexString()}.1"`);
    expectProblem(
      await as(t, user).delete(path, undefined, { headers: { 'If-Match': read } }),
      412,
      'PRECONDITION_FAILED',
    );
  });
});

describe('data items', () => {
  const api = () => as(t, user);

  /** The native collection behind the user's data collection `name`. */
  async function nativeOf(name: string) {
    const entry = await t.connection
      .collection('data_collections')
      .findOne({ tenant: user.subject, name });
    return nativeCollection(t, entry);
  }

  it('gives an item deleted and created again under the same _id another ETag', async () => {
    const created = await api()
      .post('/data/recreated', { item: { _id: 'same', v: 1 } })
      .expect(200);
    const first = etagOf(created);
    await api().delete('/data/recreated/_id/same').expect(204);
    const recreated = etagOf(
      await api()
        .post('/data/recreated', { item: { _id: 'same', v: 1 } })
        .expect(200),
    );
    expect(recreated).not.toBe(first);
    expectProblem(
      await api().put(
        '/data/recreated/_id/same',
        { values: { v: 2 } },
        { headers: { 'If-Match': first } },
      ),
      412,
      'PRECONDITION_FAILED',
    );
    await api()
      .get('/data/recreated/_id/same', { headers: { 'If-None-Match': first } })
      .expect(200);
  });

  it("tags two tenants' items at the same URL differently", async () => {
    const other = await createUser(t);
    const mine = etagOf(
      await api()
        .post('/data/shared-name', { item: { _id: 'x' } })
        .expect(200),
    );
    const theirs = etagOf(
      await as(t, other)
        .post('/data/shared-name', { item: { _id: 'x' } })
        .expect(200),
    );
    expect(mine).not.toBe(theirs);
  });

  it('never shows the revision record, and refuses it as a field name anywhere', async () => {
    const created = await api()
      .post('/data/reserved', { item: { _id: 'r', a: { b: 1 } } })
      .expect(200);
    expect(Object.keys(created.body as object).sort()).toEqual([
      '_createdAt',
      '_id',
      '_updatedAt',
      'a',
      'userId',
    ]);
    const updated = await api()
      .put('/data/reserved/_id/r', { values: { c: 1 } })
      .expect(200);
    const [read, list] = await Promise.all([
      api().get('/data/reserved/_id/r').expect(200),
      api().get('/data/reserved').expect(200),
    ]);
    for (const body of [updated.body, read.body, (list.body as unknown[])[0]])
      expect(body).not.toHaveProperty('_revision');

    expectInvalid(await api().post('/data/reserved', { item: { _revision: 1 } }), 'item._revision');
    expectInvalid(
      await api().post('/data/reserved', { item: { a: { _revision: 1 } } }),
      'item.a._revision',
    );
    expectInvalid(
      await api().put('/data/reserved/_id/r', { values: { _revision: { n: 0 } } }),
      'values._revision',
    );
    expectInvalid(
      await api().put('/data/reserved/_id/r', { values: { c: 2 }, filter: { '_revision.n': 1 } }),
    );
    expectInvalid(await api().get('/data/reserved', { query: { '_revision.n': '1' } }));
    expectInvalid(await api().get('/data/reserved', { query: { sort: '_revision.n' } }));
    expectInvalid(await api().get('/data/reserved/_revision.c/x'));
  });

  it('tags an item stored without a revision record, and accepts If-Match for it', async () => {
    await api()
      .post('/data/legacy', { item: { _id: 'seed' } })
      .expect(200);
    const createdAt = new Date('2025-06-01T12:00:00.123Z');
    await (
      await nativeOf('legacy')
    ).insertOne({
      _id: 'old',
      v: 1,
      userId: user.subject,
      _createdAt: createdAt,
      _updatedAt: createdAt,
    });
    const read = await api().get('/data/legacy/_id/old').expect(200);
    const legacyTag = `"l${createdAt.getTime().toString(36)}.0"`;
    expect(read.headers.etag).toBe(legacyTag);
    expect(read.body).toEqual({
      _id: 'old',
      v: 1,
      userId: user.subject,
      _createdAt: createdAt.toISOString(),
      _updatedAt: createdAt.toISOString(),
    });
    const written = await api()
      .put('/data/legacy/_id/old', { values: { v: 2 } }, { headers: { 'If-Match': legacyTag } })
      .expect(200);
    expect(written.headers.etag).toBe(`"l${createdAt.getTime().toString(36)}.1"`);
    const stale = await api().put(
      '/data/legacy/_id/old',
      { values: { v: 3 } },
      { headers: { 'If-Match': legacyTag } },
    );
    expectProblem(stale, 412, 'PRECONDITION_FAILED');
    expect(stale.headers.etag).toBe(written.headers.etag);
  });

  it('applies If-Match to items addressed by a field, and keeps 409 for several matches', async () => {
    await api()
      .post('/data/by-field', { item: { code: 'A', n: 0 } })
      .expect(200);
    const read = await api().get('/data/by-field/code/A').expect(200);
    const written = await api()
      .put('/data/by-field/code/A', { values: { n: 1 } }, { headers: { 'If-Match': etagOf(read) } })
      .expect(200);
    expectProblem(
      await api().delete('/data/by-field/code/A', undefined, {
        headers: { 'If-Match': etagOf(read) },
      }),
      412,
      'PRECONDITION_FAILED',
    );
    expectProblem(
      await api().put(
        '/data/by-field/code/B',
        { values: { n: 1 } },
        { headers: { 'If-Match': etagOf(written) } },
      ),
      412,
      'PRECONDITION_FAILED',
    );
    await api()
      .post('/data/by-field', { item: { code: 'A', n: 5 } })
      .expect(200);
    expectProblem(
      await api().put(
        '/data/by-field/code/A',
        { values: { n: 2 } },
        { headers: { 'If-Match': etagOf(written) } },
      ),
      409,
      'AMBIGUOUS_MATCH',
    );
  });

  it(`applies every one of ${CONCURRENT} concurrent compare-and-set increments through filter`, async () => {
    const created = await api()
      .post('/data/counter', { item: { n: 0 } })
      .expect(200);
    const path = `/data/counter/_id/${created.body._id as string}`;
    let acknowledged = 0;
    // Each client reads n and writes n + 1 only while n is unchanged, until its write lands.
    // Every landed write is seen by every later read, so a client loses at most once per
    // other client's success.
    const client = async () => {
      for (let attempt = 0; attempt < CONCURRENT; attempt++) {
        const { n } = (await api().get(path).expect(200)).body as { n: number };
        const res = await api().put(path, { values: { n: n + 1 }, filter: { n } });
        if (res.status === 200) {
          acknowledged++;
          expect(res.body.n).toBe(n + 1);
          return;
        }
        expectProblem(res, 404, 'ITEM_NOT_FOUND');
      }
      throw new Error('a compare-and-set client never got its write in');
    };
    await Promise.all(Array.from({ length: CONCURRENT }, client));
    expect(acknowledged).toBe(CONCURRENT);
    expect((await api().get(path).expect(200)).body.n).toBe(CONCURRENT);
  });

  it('leaves an item that stopped matching the filter alone (404), never overwriting it', async () => {
    const created = await api()
      .post('/data/claims', { item: { status: 'open' } })
      .expect(200);
    const path = `/data/claims/_id/${created.body._id as string}`;
    const responses = await Promise.all(
      Array.from({ length: CONCURRENT }, (_, i) =>
        api().put(path, { values: { status: 'taken', by: i }, filter: { status: 'open' } }),
      ),
    );
    const won = responses.filter((r) => r.status === 200);
    expect(won).toHaveLength(1);
    for (const lost of responses.filter((r) => r.status !== 200))
      expectProblem(lost, 404, 'ITEM_NOT_FOUND');
    expect((await api().get(path).expect(200)).body.by).toBe(won[0]!.body.by);
  });
});

describe('the OpenAPI document', () => {
  type Operation = {
    operationId: string;
    parameters?: { name: string; in: string }[];
    responses: Record<string, { headers?: Record<string, { required?: boolean }> }>;
  };

  async function operations(): Promise<Operation[]> {
    const doc = (await t.http().get('/docs-json').expect(200)).body as {
      paths: Record<string, Record<string, Operation>>;
    };
    return Object.values(doc.paths).flatMap((item) => Object.values(item));
  }

  const named = (ops: Operation[], test: (op: Operation) => boolean) =>
    ops
      .filter(test)
      .map((op) => op.operationId)
      .sort();

  it('lists the conditional headers and the 304 and 412 answers on exactly the operations that have them', async () => {
    const ops = await operations();
    const takes = (header: string) => (op: Operation) =>
      (op.parameters ?? []).some((p) => p.in === 'header' && p.name === header);
    const reads = [
      'getDataAccess',
      'getDataItem',
      'getPlan',
      'getProfile',
      'getProjectById',
      'getSubProfile',
    ];
    const writes = [
      'addProfileGroup',
      'deleteDataAccess',
      'deleteDataItem',
      'deleteDataItems',
      'deleteDataSearch',
      'deletePlan',
      'deleteProject',
      'modifyDataItemArray',
      'putDataAccess',
      'putDataSearch',
      'putPlan',
      'removeProfileGroup',
      'updateDataItem',
      'updateDataItems',
      'updateProfile',
      'updateProject',
    ];
    // Writes by filter answer one item (with its tag) or, with multi, counts (without one).
    const selective = ['deleteDataItems', 'updateDataItems'];
    // File downloads: their ETag is the bytes' SHA-256 (If-None-Match → 304), never a revision.
    const downloads = ['downloadByLink', 'downloadFile'];
    expect(named(ops, takes('If-None-Match'))).toEqual([...downloads, ...reads]);
    expect(named(ops, (op) => '304' in op.responses)).toEqual([...downloads, ...reads]);
    expect(named(ops, takes('If-Match'))).toEqual(writes);
    expect(named(ops, (op) => '412' in op.responses)).toEqual(writes);
    const tagged = (op: Operation) => op.responses['200']?.headers?.ETag?.required === true;
    const optional = (op: Operation) => op.responses['200']?.headers?.ETag?.required === false;
    expect(named(ops, optional)).toEqual(selective);
    expect(named(ops, tagged)).toEqual(
      [
        ...reads,
        // A search configuration's PUT answers 202 (its build started), not 200.
        ...writes.filter(
          (id) => !id.startsWith('delete') && !selective.includes(id) && id !== 'putDataSearch',
        ),
        'createDataItem',
        'createProject',
        'createSubProfile',
        // Tagged by its version, for If-Match on PUT and DELETE; not a conditional read (its
        // progress changes under the same version).
        'getDataSearch',
      ].sort(),
    );
  });
});

mongoOnly(
  'If-Match across two service instances needs a database that re-checks an update filter at write time (MongoDB); FerretDB does not, and each instance queues only its own writes',
  () => {
    describe('two instances on one database', () => {
      let a: ServiceProcess;
      let b: ServiceProcess;
      const dbName = uniqueDbName(__filename);

      beforeAll(async () => {
        [a, b] = await Promise.all([
          startService({ MONGODB_DB_NAME: dbName }),
          startService({ MONGODB_DB_NAME: dbName }),
        ]);
      });

      afterAll(async () => {
        await Promise.all([a?.kill(), b?.kill()]);
        const client = new MongoClient(testDatabaseUri(), { serverSelectionTimeoutMS: 5000 });
        try {
          await client.db(dbName).dropDatabase();
        } finally {
          await client.close();
        }
      });

      const json = (reply: Reply) => JSON.parse(reply.body) as Record<string, unknown>;

      it(`lets exactly one of ${CONCURRENT} If-Match PUTs spread over both through, on every kind`, async () => {
        const admin = { 'X-Api-Key': TEST_ADMIN_KEY };
        const created = await a.send('POST', '/admin/users', admin, {
          email: `${unique('two')}@example.com`,
        });
        expect(created.status).toBe(200);
        const key = { 'X-Api-Key': json(created).apiKey as string };
        const project = json(await a.send('POST', '/project', key, { name: 'p' }));
        const item = json(await a.send('POST', '/data/notes', key, { item: { n: 0 } }));
        const targets: [string, (i: number) => unknown][] = [
          ['/profile', (i) => ({ settings: { n: i } })],
          [`/project/${project.id as string}`, (i) => ({ name: `n${i}` })],
          [`/data/notes/_id/${item._id as string}`, (i) => ({ values: { n: i } })],
        ];
        for (const [path, body] of targets) {
          const read = await b.send('GET', path, key);
          expect(read.status).toBe(200);
          const etag = read.headers.etag as string;
          const replies = await Promise.all(
            Array.from({ length: CONCURRENT }, (_, i) =>
              (i % 2 === 0 ? a : b).send('PUT', path, { ...key, 'If-Match': etag }, body(i)),
            ),
          );
          const statuses = replies.map((r) => r.status).sort();
          expect({ path, statuses }).toEqual({
            path,
            statuses: [200, ...Array<number>(CONCURRENT - 1).fill(412)],
          });
          const winner = replies.find((r) => r.status === 200)!.headers.etag;
          expect((await a.send('GET', path, key)).headers.etag).toBe(winner);
        }
      });
    });
  },
);
