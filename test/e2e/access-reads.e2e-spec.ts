import type { CommandStartedEvent, Document } from 'mongodb';
import { createTestApp, type TestApp } from '../support/app';
import { createSubKey, createUser, type TestSubProfile, type TestUser } from '../support/factories';
import { exportAs } from '../support/ndjson';
import { expectProblem } from '../support/problems';
import { servedRoutes } from '../support/served-routes';

/**
 * Access rules on every read of items (docs/data.md, "Access rules"): the read rule is ANDed into
 * the one query of an item, a list, a count, an aggregate, an explain and an export; protected
 * fields leave every item a sub key receives and are refused wherever naming one could tell its
 * value. The route walk at the end drives every data read route as a sub key and fails on any
 * read of an items collection that does not carry the key's read rule.
 */
let t: TestApp;
let user: TestUser;
let sub: TestSubProfile;
let other: TestSubProfile;

/** Every command the app sends to the database, while `recording`. */
const commands: CommandStartedEvent[] = [];
let recording = false;

beforeAll(async () => {
  t = await createTestApp(__filename, {
    // Rules written to the registry are read by the next request.
    REGISTRY_CACHE_MS: '0',
    // The driver reports each command it sends: what the walk reads from.
    METRICS_DATABASE_COMMANDS: 'true',
  });
  t.connection.getClient().on('commandStarted', (event: CommandStartedEvent) => {
    if (recording) commands.push(event);
  });
  user = await createUser(t);
  sub = await createSubKey(t, user);
  other = await createSubKey(t, user);
});
afterAll(async () => t.close());

/**
 * Sets a collection's access rules (normalised as PUT /data/{c}/access stores them) on its
 * registry entry. The one place that writes rules: it becomes that route once it exists.
 */
async function setAccessRules(collection: string, rules: unknown): Promise<void> {
  await t
    .http()
    .put(`/data/${collection}/access`)
    .set('X-Api-Key', user.apiKey)
    .send(rules as object)
    .expect(200);
}

async function seed(collection: string, items: Record<string, unknown>[]): Promise<void> {
  for (const item of items)
    await t
      .http()
      .post(`/data/${collection}`)
      .set('X-Api-Key', user.apiKey)
      .send({ item })
      .expect(200);
}

const get = (key: string, path: string) => t.http().get(path).set('X-Api-Key', key);
const ids = (items: { _id: string }[]) => items.map((item) => item._id).sort();

/** The reads of items collections (`d_*`) among the recorded commands. */
function itemReads(): { name: string; command: Document }[] {
  return commands.flatMap((event) => {
    const command = (
      event.commandName === 'explain' ? event.command.explain : event.command
    ) as Document;
    const name = ['find', 'aggregate', 'count', 'distinct']
      .map((verb) => command[verb] as unknown)
      .find((target) => typeof target === 'string');
    return typeof name === 'string' && name.startsWith('d_') ? [{ name, command }] : [];
  });
}

/** Runs `work` and answers the item reads it sent. */
async function recorded(work: () => Promise<unknown>): Promise<{ command: Document }[]> {
  commands.length = 0;
  recording = true;
  try {
    await work();
  } finally {
    recording = false;
  }
  return itemReads();
}

describe('the read rule on every read of items', () => {
  const c = 'shared_notes';
  beforeAll(async () => {
    await seed(c, [
      { _id: 'pub1', shared: true, title: 'a', n: 1, userId: user.subject },
      { _id: 'pub2', shared: true, title: 'b', n: 2, userId: 'someone-else' },
      { _id: 'own1', shared: false, title: 'a', n: 4, userId: sub.accountId },
      { _id: 'priv', shared: false, title: 'c', n: 8, userId: other.accountId },
    ]);
    // Shared items for every sub key, and nothing else — not even its own.
    await setAccessRules(c, { sub: { read: { filter: { shared: true } } } });
  });

  it('an item outside the rule answers 404 exactly as a missing one, through one query of the same shape', async () => {
    const readable = await get(sub.apiKey, `/data/${c}/_id/pub2`).expect(200);
    expect(readable.body).toMatchObject({ _id: 'pub2', shared: true });
    let outside: { status: number; body: Record<string, unknown> } | undefined;
    const outsideReads = await recorded(async () => {
      outside = await get(sub.apiKey, `/data/${c}/_id/own1`);
    });
    const missing = await get(sub.apiKey, `/data/${c}/_id/nothing-here`);
    expectProblem(missing, 404, 'ITEM_NOT_FOUND');
    // The same problem but for where it was asked and its trace.
    const answer = (res?: { status: number; body: Record<string, unknown> }) => {
      const { instance: _, traceId: __, ...problem } = res?.body ?? {};
      return { status: res?.status, problem };
    };
    expect(answer(outside)).toEqual(answer(missing));
    const readableReads = await recorded(() => get(sub.apiKey, `/data/${c}/_id/pub1`).expect(200));
    // One find each, the same filter but for the _id: no extra lookup tells them apart.
    expect(outsideReads).toHaveLength(1);
    expect(readableReads).toHaveLength(1);
    const shape = (reads: { command: Document }[]) =>
      JSON.stringify(reads[0]?.command.filter).replace(/"(own1|pub1)"/, '"ID"');
    expect(shape(outsideReads)).toBe(shape(readableReads));
    // By another field: the same rule.
    await get(sub.apiKey, `/data/${c}/title/c`).expect(404);
    const byTitle = await get(sub.apiKey, `/data/${c}/title/b`).expect(200);
    expect(byTitle.body._id).toBe('pub2');
  });

  it('lists, counts, aggregates, explains and exports only what the rule reads', async () => {
    const list = await get(sub.apiKey, `/data/${c}?sort=n&sortOrder=asc`).expect(200);
    expect(ids(list.body)).toEqual(['pub1', 'pub2']);
    // Keyset pages walk the readable items only.
    const first = await get(sub.apiKey, `/data/${c}?sort=n&sortOrder=asc&limit=1`).expect(200);
    expect(ids(first.body)).toEqual(['pub1']);
    const next = /<([^>]+)>; rel="next"/.exec(String(first.headers.link))?.[1] ?? '';
    const second = await get(sub.apiKey, next).expect(200);
    expect(ids(second.body)).toEqual(['pub2']);
    expect(second.headers.link).toBeUndefined();
    const filtered = await get(sub.apiKey, `/data/${c}?title=a`).expect(200);
    expect(ids(filtered.body)).toEqual(['pub1']);
    expect((await get(sub.apiKey, `/data/${c}/count`).expect(200)).body).toEqual({ count: 2 });
    expect((await get(sub.apiKey, `/data/${c}/count?title=a`).expect(200)).body).toEqual({
      count: 1,
    });
    const groups = await get(sub.apiKey, `/data/${c}/aggregate?groupBy=title`).expect(200);
    expect(groups.body.groups).toEqual([
      { key: 'a', value: 1 },
      { key: 'b', value: 1 },
    ]);
    // avg is computed from the items themselves on FerretDB: the same rule.
    const avg = await get(sub.apiKey, `/data/${c}/aggregate?groupBy=shared&op=avg&field=n`);
    expect(avg.body.groups).toEqual([{ key: true, value: 1.5 }]);
    await get(sub.apiKey, `/data/${c}/explain?title=a`).expect(200);
    const exported = await exportAs(t, sub, { collections: c });
    expect(exported.status).toBe(200);
    const lines = exported.lines.filter((line) => line.type === 'item');
    expect(ids(lines.map((line) => line.item as { _id: string }))).toEqual(['pub1', 'pub2']);
    const manifest = exported.lines[0] as { collections: { name: string; count: number }[] };
    expect(manifest.collections).toEqual([expect.objectContaining({ name: c, count: 2 })]);
    // The root key is not limited by the rules.
    const all = await get(user.apiKey, `/data/${c}`).expect(200);
    expect(ids(all.body)).toEqual(['own1', 'priv', 'pub1', 'pub2']);
  });

  it('a rule with a caller constant reads what it names for each key', async () => {
    await setAccessRules(c, { sub: { read: { filter: { userId: '$caller.accountId' } } } });
    expect(ids((await get(sub.apiKey, `/data/${c}`).expect(200)).body)).toEqual(['own1']);
    expect(ids((await get(other.apiKey, `/data/${c}`).expect(200)).body)).toEqual(['priv']);
    await get(other.apiKey, `/data/${c}/_id/own1`).expect(404);
    await setAccessRules(c, { sub: { read: 'none' } });
    await get(sub.apiKey, `/data/${c}`).expect(204);
    await get(sub.apiKey, `/data/${c}/_id/own1`).expect(404);
    expect((await get(sub.apiKey, `/data/${c}/count`).expect(200)).body).toEqual({ count: 0 });
  });
});

describe('protected fields on every read of items', () => {
  const c = 'priced_items';
  const SECRET = 'canary-7f3a';
  beforeAll(async () => {
    await seed(c, [
      { _id: 'p1', name: 'bolt', cost: 12, meta: { secret: SECRET, shown: 1 }, userId: 'x' },
      { _id: 'p2', name: 'nut', cost: 3, meta: { secret: SECRET, shown: 2 }, userId: 'y' },
    ]);
    await setAccessRules(c, {
      sub: { read: 'all' },
      protectedFields: { sub: ['cost', 'meta.secret'] },
    });
  });

  it('are left out of every item a sub key receives, whatever the projection', async () => {
    const list = await get(sub.apiKey, `/data/${c}?sort=name&sortOrder=asc`).expect(200);
    expect(list.body).toEqual([
      expect.objectContaining({ _id: 'p1', name: 'bolt', meta: { shown: 1 } }),
      expect.objectContaining({ _id: 'p2', name: 'nut', meta: { shown: 2 } }),
    ]);
    const one = await get(sub.apiKey, `/data/${c}/_id/p1`).expect(200);
    expect(one.body).toMatchObject({ name: 'bolt', meta: { shown: 1 } });
    const excluding = await get(sub.apiKey, `/data/${c}/_id/p1?fields=-name`).expect(200);
    const projected = await get(sub.apiKey, `/data/${c}?fields=-name`).expect(200);
    const exported = await exportAs(t, sub, { collections: c });
    for (const text of [list.text, one.text, excluding.text, projected.text, exported.text]) {
      expect(text).not.toContain(SECRET);
      expect(text).not.toContain('"cost"');
    }
    expect(exported.lines.filter((line) => line.type === 'item')).toHaveLength(2);
    // Root and team keys see every field.
    const whole = await get(user.apiKey, `/data/${c}/_id/p1`).expect(200);
    expect(whole.body).toMatchObject({ cost: 12, meta: { secret: SECRET, shown: 1 } });
    await get(user.apiKey, `/data/${c}?cost[gt]=5&sort=cost`).expect(200);
  });

  it.each([
    ['a filter', `?cost=12`, 'filter'],
    ['a filter inside one', `?meta.secret[ne]=x`, 'filter'],
    ['existsFilter', `?cost[exists]=true`, 'filter'],
    ['a sort', `?sort=cost`, 'sort'],
    ['a projection', `?fields=cost`, 'fields'],
    ['an exclusion', `?fields=-cost`, 'fields'],
    ['a projection holding one', `?fields=meta`, 'fields'],
    ['a keyset cursor', `?sort=cost&after[cost]=5&after[_id]=p1`, 'after[cost]'],
    ['a backward cursor', `?sort=cost&before[cost]=5&before[_id]=p1`, 'before[cost]'],
  ])('are refused in %s of a list, and of its explain', async (_, query, field) => {
    for (const route of [`/data/${c}`, `/data/${c}/explain`]) {
      const res = await get(sub.apiKey, `${route}${query}`);
      expectProblem(res, 400, 'PROTECTED_FIELD');
      expect(res.body.errors).toEqual([expect.objectContaining({ field })]);
    }
  });

  it.each([
    ['an item route by a protected field', `/cost/12`, 'indexName'],
    ['an item route holding one', `/meta/x`, 'indexName'],
    ['an item read filter', `/_id/p1?cost=12`, 'filter'],
    ['an item read projection', `/_id/p1?fields=meta.secret`, 'fields'],
    ['a count filter', `/count?cost[lt]=5`, 'filter'],
    ['an aggregate group', `/aggregate?groupBy=cost`, 'groupBy'],
    ['an aggregate sum', `/aggregate?groupBy=name&op=sum&field=cost`, 'field'],
    ['an aggregate filter', `/aggregate?groupBy=name&meta.secret=x`, 'filter'],
  ])('are refused in %s', async (_, path, field) => {
    const res = await get(sub.apiKey, `/data/${c}${path}`);
    expectProblem(res, 400, 'PROTECTED_FIELD');
    expect(res.body.errors).toEqual([expect.objectContaining({ field })]);
    expect(JSON.stringify(res.body)).not.toContain(SECRET);
  });
});

/**
 * The route walk: every data route, found from what the app serves. A read route is driven as a
 * sub key whose read rule is a sentinel (`walk` equal to its account), and every read of an
 * items collection it sends must carry the sentinel. A route the walk does not drive says why;
 * a route in neither list fails, so a new route is walked or explained before it ships.
 */
describe('the route walk', () => {
  const c = 'walked';
  /** What a driven route is requested as (several requests reach several code paths). */
  const DRIVEN: Record<string, string[]> = {
    'GET /data/{collection}': [
      `/data/${c}`,
      `/data/${c}?name=n1&sort=name&sortOrder=asc`,
      // A page whose sort field the projection leaves out reads the edge item's sort values.
      `/data/${c}?sort=name&sortOrder=asc&limit=1&fields=other`,
      `/data/${c}?sort=name&sortOrder=asc&limit=1&after[name]=n0&after[_id]=w0`,
    ],
    'GET /data/{collection}/count': [`/data/${c}/count`, `/data/${c}/count?name=n1`],
    'GET /data/{collection}/{indexName}/{indexValue}': [
      `/data/${c}/_id/w1`,
      `/data/${c}/name/n1`,
      `/data/${c}/_id/w1?fields=name`,
    ],
    'GET /data/{collection}/aggregate': [
      `/data/${c}/aggregate?groupBy=name`,
      `/data/${c}/aggregate?groupBy=name&op=sum&field=n`,
      `/data/${c}/aggregate?groupBy=name&op=avg&field=n`,
    ],
    'GET /data/{collection}/explain': [`/data/${c}/explain?name=n1`],
    'GET /export': [`/export?collections=${c}`, `/export?collections=${c}&after=${c}/w0`],
  };
  /** Routes the walk does not drive as reads, and why. */
  const NOT_DRIVEN: Record<string, string> = {
    'GET /data': 'lists collections from the registry; reads no item',
    'GET /data/openapi.json': 'the typed clients document; reads no item',
    'GET /data/{collection}/index': 'root and team keys only: their plan reads every item',
    'GET /data/{collection}/stats': 'root and team keys only: their plan reads every item',
    'GET /data/{collection}/schema': 'root and team keys only: reads the registry entry',
    'GET /data/{collection}/schema-violations': 'root and team keys only',
    'GET /data/{collection}/expiry': 'root and team keys only: reads the registry entry',
    'GET /data/{collection}/access': 'the rules themselves, root and team keys only',
    'POST /data/{collection}': 'a write: its reads are judged by the create rule',
    'PUT /data/{collection}': 'a write: its reads are judged by the update rule',
    'DELETE /data/{collection}': 'a write (or a drop): judged by the delete rule',
    'POST /data/{collection}/bulk': 'a write: judged by the create rule',
    'PUT /data/{collection}/{indexName}/{indexValue}': 'a write: judged by the update rule',
    'PATCH /data/{collection}/{indexName}/{indexValue}': 'a write: judged by the update rule',
    'DELETE /data/{collection}/{indexName}/{indexValue}': 'a write: judged by the delete rule',
    'POST /data/{collection}/index': 'root and team keys only: an index, no item read',
    'DELETE /data/{collection}/index': 'root and team keys only: an index, no item read',
    'PUT /data/{collection}/schema': 'root and team keys only: validates items as a rule',
    'DELETE /data/{collection}/schema': 'root and team keys only',
    'PUT /data/{collection}/expiry': 'root and team keys only',
    'DELETE /data/{collection}/expiry': 'root and team keys only',
    'PUT /data/{collection}/access': 'the rules themselves, root and team keys only',
    'DELETE /data/{collection}/access': 'the rules themselves, root and team keys only',
    'GET /data/{collection}/search': 'root and team keys only: the search configuration',
    'PUT /data/{collection}/search': 'root and team keys only: the search configuration',
    'DELETE /data/{collection}/search': 'root and team keys only: the search configuration',
    'POST /import': 'a write: each item is judged by the create or update rule',
  };

  beforeAll(async () => {
    await seed(c, [
      { _id: 'w0', name: 'n0', n: 1, other: 1, walk: sub.accountId },
      { _id: 'w1', name: 'n1', n: 2, other: 2, walk: sub.accountId },
      { _id: 'w2', name: 'n2', n: 4, other: 3, walk: sub.accountId },
      { _id: 'w3', name: 'n1', n: 8, other: 4, walk: 'elsewhere', userId: sub.accountId },
    ]);
    await setAccessRules(c, { sub: { read: { filter: { walk: '$caller.accountId' } } } });
  });

  it('knows every data route: each one is walked or says why not', () => {
    const routes = servedRoutes(t).filter((route) => / \/(data|export|import)\b/.test(route));
    expect(routes.length).toBeGreaterThan(10);
    const unknown = routes.filter((route) => !(route in DRIVEN) && !(route in NOT_DRIVEN));
    expect(unknown).toEqual([]);
  });

  it('every read of items by a driven route carries the read rule', async () => {
    const sentinel = `"walk":"${sub.accountId}"`;
    const unruled: string[] = [];
    for (const [route, paths] of Object.entries(DRIVEN))
      for (const path of paths) {
        let status = 0;
        const reads = await recorded(async () => {
          const res = await (route === 'GET /export'
            ? exportAs(t, sub, {}, { path })
            : get(sub.apiKey, path));
          status = res.status;
        });
        expect({ path, ok: status === 200 }).toEqual({ path, ok: true });
        // Each driven request reads items, or the walk proves nothing about it.
        expect({ path, reads: reads.length > 0 }).toEqual({ path, reads: true });
        for (const { command } of reads)
          if (!JSON.stringify(command).includes(sentinel))
            unruled.push(`${path}: ${JSON.stringify(command.filter ?? command.pipeline)}`);
      }
    expect(unruled).toEqual([]);
    // The item the rule leaves out (its owner field names the key) is not read.
    await get(sub.apiKey, `/data/${c}/_id/w3`).expect(404);
  });
});
