import { COUNT_WRITE } from '../../src/data/items/item-revision';
import { createTestApp, nativeCollection, testDatabaseUri, type TestApp } from '../support/app';
import { createSubKey, createUser, type TestSubProfile, type TestUser } from '../support/factories';
import { importAs, resultsOf } from '../support/ndjson';
import { expectProblem } from '../support/problems';
import { until } from '../support/until';
import { startWireProxy, type WireProxy } from '../support/wire-proxy';

/**
 * Every item write judged by the collection's access rules (docs/data.md, "Access rules"): a
 * create inside the create rule, an update or delete of a readable item inside its rule before
 * (and for an update after), all or nothing for many items, no protected field set or answered,
 * and no `existingId` of an item the caller cannot read. The registry cache is off, so a rule
 * written is the rule of the next request.
 */

let t: TestApp;
let proxy: WireProxy;
let owner: TestUser;
let alice: TestSubProfile;
let bob: TestSubProfile;

beforeAll(async () => {
  // Through a proxy that can hold one database command: a write stopped between its check and
  // its write, while another writer changes the item.
  proxy = await startWireProxy(testDatabaseUri());
  t = await createTestApp(__filename, { REGISTRY_CACHE_MS: '0', MONGODB_URI: proxy.uri });
  owner = await createUser(t);
  alice = await createSubKey(t, owner);
  bob = await createSubKey(t, owner);
});

afterAll(async () => {
  await t.close();
  await proxy.close();
});

const send = (
  key: string,
  method: 'post' | 'put' | 'patch' | 'delete',
  path: string,
  body?: object,
) => {
  const req = t.http()[method](path).set('X-Api-Key', key);
  return body === undefined ? req : req.send(body);
};
const get = (key: string, path: string) => t.http().get(path).set('X-Api-Key', key);

let counter = 0;
/**
 * A collection of its own with `items` (written by the root key, each owned by the sub its
 * `userId` names) and the access rules `rules`. The rules are written on the registry entry as
 * PUT /data/{c}/access stores them.
 */
async function collectionWith(rules: object, items: Record<string, unknown>[]): Promise<string> {
  counter += 1;
  const name = `acc${counter}`;
  await send(owner.apiKey, 'post', `/data/${name}/bulk`, {
    items: [{ _id: 'seed' }, ...items],
  }).expect(200);
  await send(owner.apiKey, 'delete', `/data/${name}/_id/seed`).expect(204);
  await setAccessRules(name, rules);
  return name;
}

async function setAccessRules(collection: string, rules: object): Promise<void> {
  await t
    .http()
    .put(`/data/${collection}/access`)
    .set('X-Api-Key', owner.apiKey)
    .send(rules)
    .expect(200);
}

/** Every item of the collection, as the root key reads it, by _id. */
async function stored(collection: string): Promise<Record<string, Record<string, unknown>>> {
  const res = await get(owner.apiKey, `/data/${collection}?limit=100`).expect((r) => {
    expect([200, 204]).toContain(r.status);
  });
  const items = res.status === 204 ? [] : (res.body as Record<string, unknown>[]);
  return Object.fromEntries(items.map((item) => [item._id as string, item]));
}

describe('creates', () => {
  it('refuses an item outside the create rule with 403, in POST, bulk and find-or-create', async () => {
    const name = await collectionWith({ sub: { create: { filter: { status: 'draft' } } } }, []);
    const refused = await send(alice.apiKey, 'post', `/data/${name}`, {
      item: { _id: 'p', status: 'published' },
    });
    expectProblem(refused, 403, 'ACCESS_RULE');
    await send(alice.apiKey, 'post', `/data/${name}`, {
      item: { _id: 'd', status: 'draft' },
    }).expect(200);
    const bulk = await send(alice.apiKey, 'post', `/data/${name}/bulk`, {
      items: [
        { _id: 'b1', status: 'published' },
        { _id: 'b2', status: 'draft' },
      ],
    }).expect(200);
    expect(bulk.body.results.map((r: { status: number }) => r.status)).toEqual([403, 200]);
    expect(bulk.body.results[0].error.code).toBe('ACCESS_RULE');
    const found = await send(alice.apiKey, 'post', `/data/${name}`, {
      item: { _id: 'f', code: 'F', status: 'published' },
      uniqueField: 'code',
      onConflict: 'return',
    });
    expectProblem(found, 403, 'ACCESS_RULE');
    expect(Object.keys(await stored(name)).sort()).toEqual(['b2', 'd']);
  });

  it('judges the item as it will be: the owner field stamped for a sub key', async () => {
    const name = await collectionWith(
      { sub: { create: { filter: { userId: '$caller.accountId', app: '$caller.clientId' } } } },
      [],
    );
    expectProblem(
      await send(alice.apiKey, 'post', `/data/${name}`, { item: { _id: 'a', app: 'another' } }),
      403,
      'ACCESS_RULE',
    );
    // The body names another owner; the sub's own account is stamped over it, so it is inside.
    await send(alice.apiKey, 'post', `/data/${name}`, {
      item: { _id: 'a', userId: bob.accountId, app: alice.clientId },
    }).expect(200);
    expect((await stored(name)).a?.userId).toBe(alice.accountId);
  });

  it('refuses a protected field with 403 and answers the item without it', async () => {
    const name = await collectionWith(
      { sub: { read: 'all', update: 'all' }, protectedFields: { sub: ['cost', 'meta.note'] } },
      [
        {
          _id: 'x',
          userId: bob.accountId,
          title: 'X',
          cost: 7,
          meta: { note: 'secret', tag: 't' },
        },
      ],
    );
    for (const item of [{ cost: 1 }, { meta: { note: 'n' } }, { cost: null }])
      expectProblem(
        await send(alice.apiKey, 'post', `/data/${name}`, { item: { _id: 'n', ...item } }),
        403,
        'ACCESS_RULE',
      );
    // A field beside a protected one is fine.
    await send(alice.apiKey, 'post', `/data/${name}`, {
      item: { _id: 'n', meta: { tag: 'x' } },
    }).expect(200);
    const put = await send(alice.apiKey, 'put', `/data/${name}/_id/x`, {
      values: { title: 'Y' },
    }).expect(200);
    expect(put.body).toMatchObject({ _id: 'x', title: 'Y', meta: { tag: 't' } });
    expect(put.body).not.toHaveProperty('cost');
    expect(put.body.meta).not.toHaveProperty('note');
    expect(JSON.stringify(put.body)).not.toContain('secret');
    const patched = await send(alice.apiKey, 'patch', `/data/${name}/_id/x`, {
      push: { field: 'tags', value: 'a' },
    }).expect(200);
    expect(JSON.stringify(patched.body)).not.toContain('secret');
    expectProblem(
      await send(alice.apiKey, 'put', `/data/${name}/_id/x`, { values: { cost: 2 } }),
      403,
      'ACCESS_RULE',
    );
    expectProblem(
      await send(alice.apiKey, 'put', `/data/${name}/_id/x`, { values: { meta: {} } }),
      403,
      'ACCESS_RULE',
    );
    expectProblem(
      await send(alice.apiKey, 'patch', `/data/${name}/_id/x`, {
        push: { field: 'cost', value: 1 },
      }),
      403,
      'ACCESS_RULE',
    );
    const kept = (await stored(name)).x;
    expect(kept).toMatchObject({ cost: 7, meta: { note: 'secret', tag: 't' } });
  });

  it('answers no Schema-Warnings entry about a protected field', async () => {
    const name = await collectionWith(
      { sub: { read: 'all', update: 'all' }, protectedFields: { sub: ['cost'] } },
      [{ _id: 'x', userId: bob.accountId, cost: -5, qty: 1 }],
    );
    const schema = {
      type: 'object',
      properties: { cost: { minimum: 0 }, qty: { minimum: 0 } },
    };
    await send(owner.apiKey, 'put', `/data/${name}/schema`, { schema, action: 'warn' }).expect(200);
    const own = await send(owner.apiKey, 'put', `/data/${name}/_id/x`, {
      values: { qty: -1 },
    }).expect(200);
    expect(own.headers['schema-warnings']).toBe('#/cost minimum, #/qty minimum');
    const res = await send(alice.apiKey, 'put', `/data/${name}/_id/x`, {
      values: { qty: -2 },
    }).expect(200);
    expect(res.headers['schema-warnings']).toBe('#/qty minimum');
    expect(res.body).not.toHaveProperty('cost');
  });

  it('leaves existingId out of a 409 for an item the caller cannot read', async () => {
    const name = await collectionWith({ sub: { read: 'own', create: 'all' } }, [
      { _id: 'theirs', userId: bob.accountId },
    ]);
    await send(alice.apiKey, 'post', `/data/${name}`, { item: { _id: 'mine' } }).expect(200);
    const hidden = await send(alice.apiKey, 'post', `/data/${name}`, { item: { _id: 'theirs' } });
    expectProblem(hidden, 409, 'DUPLICATE_ITEM');
    expect(hidden.body).not.toHaveProperty('existingId');
    const own = await send(alice.apiKey, 'post', `/data/${name}`, { item: { _id: 'mine' } });
    expectProblem(own, 409, 'DUPLICATE_ITEM');
    expect(own.body.existingId).toBe('mine');
    // Readable for bob, so named for him.
    const named = await send(bob.apiKey, 'post', `/data/${name}`, { item: { _id: 'theirs' } });
    expect(named.body.existingId).toBe('theirs');
  });
});

describe('updates', () => {
  /** alice may read everything, and update drafts only. */
  const RULES = { sub: { read: 'all', update: { filter: { status: 'draft' } } } };
  const ITEMS = () => [
    { _id: 'd1', userId: bob.accountId, status: 'draft', n: 1 },
    { _id: 'd2', userId: alice.accountId, status: 'draft', n: 2 },
    { _id: 'p1', userId: bob.accountId, status: 'published', n: 3 },
  ];

  it('writes an item inside the rule before and after, and refuses one outside either with 403', async () => {
    const name = await collectionWith(RULES, ITEMS());
    const ok = await send(alice.apiKey, 'put', `/data/${name}/_id/d1`, {
      values: { n: 10 },
    }).expect(200);
    expect(ok.body.n).toBe(10);
    // Before: a published item.
    expectProblem(
      await send(alice.apiKey, 'put', `/data/${name}/_id/p1`, { values: { n: 30 } }),
      403,
      'ACCESS_RULE',
    );
    // After: the values would take the item out of the rule.
    expectProblem(
      await send(alice.apiKey, 'put', `/data/${name}/_id/d1`, { values: { status: 'published' } }),
      403,
      'ACCESS_RULE',
    );
    // By a body filter, and by another field's value.
    expectProblem(
      await send(alice.apiKey, 'put', `/data/${name}`, { filter: { n: 3 }, values: { n: 31 } }),
      403,
      'ACCESS_RULE',
    );
    expectProblem(
      await send(alice.apiKey, 'patch', `/data/${name}/_id/p1`, {
        push: { field: 'tags', value: 1 },
      }),
      403,
      'ACCESS_RULE',
    );
    const items = await stored(name);
    expect(items.d1).toMatchObject({ status: 'draft', n: 10 });
    expect(items.p1).toMatchObject({ status: 'published', n: 3 });
    expect(items.p1).not.toHaveProperty('tags');
  });

  it('answers 404 for an item outside the read rule, as for a missing one', async () => {
    // alice reads published items only: her own draft is missing to her, bob's published item not.
    const name = await collectionWith(
      { sub: { read: { filter: { status: 'published' } }, update: 'all', delete: 'all' } },
      ITEMS(),
    );
    const missing = await send(alice.apiKey, 'put', `/data/${name}/_id/none`, { values: { n: 0 } });
    const hidden = await send(alice.apiKey, 'put', `/data/${name}/_id/d2`, { values: { n: 0 } });
    expectProblem(hidden, 404, 'ITEM_NOT_FOUND');
    expect(hidden.body.detail).toBe(missing.body.detail);
    expectProblem(
      await send(alice.apiKey, 'delete', `/data/${name}/_id/d2`),
      404,
      'ITEM_NOT_FOUND',
    );
    expectProblem(
      await send(alice.apiKey, 'patch', `/data/${name}/_id/d2`, {
        push: { field: 'tags', value: 1 },
      }),
      404,
      'ITEM_NOT_FOUND',
    );
    await send(alice.apiKey, 'put', `/data/${name}/_id/p1`, { values: { n: 30 } }).expect(200);
    const own = await send(alice.apiKey, 'put', `/data/${name}`, {
      filter: { userId: alice.accountId },
      values: { n: 0 },
      multi: true,
    }).expect(200);
    expect(own.body).toMatchObject({ matched: 0, modified: 0 });
    const items = await stored(name);
    expect(items.d2).toMatchObject({ n: 2 });
    expect(items.d2).not.toHaveProperty('tags');
    expect(items.p1?.n).toBe(30);
  });

  it('writes only at the revision it judged: a change in between is judged again', async () => {
    const name = await collectionWith(RULES, ITEMS());
    const entry = await t.connection.collection('data_collections').findOne({ name });
    const physical = entry?.physical as string;
    // alice's update of d1 reads and judges it (a draft), then its write is held …
    proxy.hold((command) => command.findAndModify === physical);
    const pending = send(alice.apiKey, 'put', `/data/${name}/_id/d1`, {
      values: { status: 'draft', n: 11 },
    }).then((res) => res);
    await until('the checked write reaches the database', () => proxy.held() > 0);
    // … while another writer (another instance) publishes it, moving its revision.
    await nativeCollection(t, entry).updateOne(
      { _id: 'd1' },
      { $set: { status: 'published' }, ...COUNT_WRITE },
    );
    proxy.release();
    expectProblem(await pending, 403, 'ACCESS_RULE');
    expect((await stored(name)).d1).toMatchObject({ status: 'published', n: 1 });
  });

  it('updates many items all or nothing: one outside the rule before or after refuses them all', async () => {
    const name = await collectionWith(RULES, ITEMS());
    expectProblem(
      await send(alice.apiKey, 'put', `/data/${name}`, {
        filter: { userId: bob.accountId },
        values: { n: 0 },
        multi: true,
      }),
      403,
      'ACCESS_RULE',
    );
    expectProblem(
      await send(alice.apiKey, 'put', `/data/${name}`, {
        filter: { status: 'draft' },
        values: { status: 'published' },
        multi: true,
      }),
      403,
      'ACCESS_RULE',
    );
    let items = await stored(name);
    expect([items.d1?.n, items.d2?.n, items.p1?.n]).toEqual([1, 2, 3]);
    expect(items.d1?.status).toBe('draft');
    const ok = await send(alice.apiKey, 'put', `/data/${name}`, {
      filter: { status: 'draft' },
      values: { n: 0 },
      multi: true,
    }).expect(200);
    expect(ok.body).toMatchObject({ matched: 2, modified: 2 });
    items = await stored(name);
    expect([items.d1?.n, items.d2?.n, items.p1?.n]).toEqual([0, 0, 3]);
  });

  it('keeps the owner field a sub key may not change, whatever the rule', async () => {
    const name = await collectionWith({ sub: { read: 'all', update: 'all' } }, ITEMS());
    const res = await send(alice.apiKey, 'put', `/data/${name}/_id/d1`, {
      values: { userId: alice.accountId },
    });
    expect(res.status).toBe(403);
    expect((await stored(name)).d1?.userId).toBe(bob.accountId);
  });

  it('judges import lines as the routes do, and its dry run answers alike', async () => {
    const name = await collectionWith(
      {
        sub: {
          read: 'all',
          update: { filter: { status: 'draft' } },
          create: { filter: { status: 'draft' } },
        },
      },
      ITEMS(),
    );
    const lines = [
      { type: 'item', collection: name, item: { _id: 'd2', status: 'draft', n: 20 } },
      { type: 'item', collection: name, item: { _id: 'p1', status: 'draft', n: 30 } },
      { type: 'item', collection: name, item: { _id: 'd2', status: 'published', n: 21 } },
      { type: 'item', collection: name, item: { _id: 'new', status: 'published' } },
      { type: 'item', collection: name, item: { _id: 'new2', status: 'draft' } },
    ];
    const dry = resultsOf(
      await importAs(t, alice.apiKey, lines, { mode: 'upsert', dryRun: 'true' }),
    );
    expect(dry.results.map((r) => r.status)).toEqual([200, 403, 403, 403, 201]);
    expect((await stored(name)).d2).toMatchObject({ n: 2 });
    const { results } = resultsOf(await importAs(t, alice.apiKey, lines, { mode: 'upsert' }));
    expect(results.map((r) => r.status)).toEqual([200, 403, 403, 403, 201]);
    expect(results[1]).toMatchObject({ code: 'ACCESS_RULE' });
    expect(results[3]).toMatchObject({ code: 'ACCESS_RULE' });
    const items = await stored(name);
    expect(items.d2).toMatchObject({ status: 'draft', n: 20 });
    expect(items.p1).toMatchObject({ status: 'published', n: 3 });
    expect(items).not.toHaveProperty('new');
    expect(items.new2?.userId).toBe(alice.accountId);
  });
});

describe('deletes', () => {
  it('deletes a readable item inside the delete rule; 403 outside it, all or nothing for many', async () => {
    const name = await collectionWith({ sub: { read: 'all', delete: 'own' } }, [
      { _id: 'a1', userId: alice.accountId, k: 'x' },
      { _id: 'a2', userId: alice.accountId, k: 'x' },
      { _id: 'b1', userId: bob.accountId, k: 'x' },
    ]);
    expectProblem(await send(alice.apiKey, 'delete', `/data/${name}/_id/b1`), 403, 'ACCESS_RULE');
    expectProblem(
      await send(alice.apiKey, 'delete', `/data/${name}`, { filter: { k: 'x' }, multi: true }),
      403,
      'ACCESS_RULE',
    );
    expect(Object.keys(await stored(name)).sort()).toEqual(['a1', 'a2', 'b1']);
    await send(alice.apiKey, 'delete', `/data/${name}/_id/a1`).expect(204);
    const many = await send(alice.apiKey, 'delete', `/data/${name}`, {
      filter: { userId: alice.accountId },
      multi: true,
    }).expect(200);
    expect(many.body).toEqual({ deleted: 1 });
    expect(Object.keys(await stored(name))).toEqual(['b1']);
  });
});
