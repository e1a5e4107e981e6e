import type { Document } from 'mongodb';
import {
  companionCollection,
  createTestApp,
  nativeCollection,
  TEST_ADMIN_KEY,
  type TestApp,
} from '../support/app';
import { parseLines, type Line } from '../support/ndjson';
import { RawBody, startService, type Reply, type ServiceProcess } from '../support/service-process';
import { untilSeenAfter } from '../support/until';

/**
 * The limits of a plan (docs/plans.md), with two instances (`node dist/main.js`) on one database:
 * the operator puts a plan in the catalogue and gives it to a user; concurrent writers through
 * both instances — POST, bulk, find-or-create and import lines for items; first writes of each
 * kind for collections; uploads; webhooks — end with exactly the plan's limit of items,
 * collections and webhooks and at most its file bytes, every refusal `409 PLAN_LIMIT_EXCEEDED`
 * naming the limit, its value, the usage and the plan, and nothing half-written. Then a new plan
 * entry with lower limits: every request sent PLAN_CACHE_MS after the change sees it on both
 * instances (polled, never slept for; a request sent that late that does not see it fails the
 * test), growth is refused, while everything stays readable, deletable and exportable, and
 * deleting below the limit lets a create in again; a catalogue edit of that plan reaches both
 * instances within the same bound.
 */
const PLAN_CACHE_MS = 1000;
/** Date.now()'s whole milliseconds, which the cache compares, against the test's clock. */
const CLOCK_SLACK_MS = 10;

/**
 * A change written at `changed` is seen by every request sent PLAN_CACHE_MS after it: every cached
 * plan is trusted for PLAN_CACHE_MS from the moment its read began (src/plans/timed-cache.ts).
 */
const seenWithinCacheTime = (what: string, changed: number, probe: () => Promise<boolean>) =>
  untilSeenAfter(what, changed, PLAN_CACHE_MS + CLOCK_SLACK_MS, probe);
const ITEMS = 5;
const COLLECTIONS = 3;
const WEBHOOKS = 3;
const FILE_BYTES_LIMIT = 100_000;
const FILE_BYTES = 30_000;
/** The plan every writer test holds: small limits of every kind, far below the deployment's. */
const PLAN = 'small-team';
const LIMITS = {
  itemsPerCollection: ITEMS,
  collections: COLLECTIONS,
  webhooks: WEBHOOKS,
  fileBytes: FILE_BYTES_LIMIT,
};
const ENV = {
  LOG_LEVEL: 'warn',
  WEBHOOK_ALLOW_PRIVATE: 'true',
  PLAN_CACHE_MS: String(PLAN_CACHE_MS),
};
const HOUR = 3_600_000;
let t: TestApp;
let a: ServiceProcess;
let b: ServiceProcess;

beforeAll(async () => {
  // The app in this process is only the test's view of the database (its collections, wherever
  // the tenant's placement put them); every request goes to the two instances.
  t = await createTestApp(__filename);
  const env = { ...ENV, MONGODB_DB_NAME: t.config.database.dbName };
  [a, b] = await Promise.all([startService(env, 90_000), startService(env, 90_000)]);
  await putPlan(PLAN, LIMITS);
}, 200_000);

afterAll(async () => {
  await Promise.all([a?.kill(), b?.kill()]);
  await t?.close();
});

const OPERATOR = { 'X-Api-Key': TEST_ADMIN_KEY };
const keyed = (key: string) => ({ 'X-Api-Key': key });
/** Instance a for even i, b for odd i. */
const instance = (i: number): ServiceProcess => (i % 2 === 0 ? a : b);
const json = <T = Record<string, unknown>>(reply: Reply) => JSON.parse(reply.body) as T;
const iso = (at: number) => new Date(at).toISOString();

async function call(
  service: ServiceProcess,
  method: string,
  path: string,
  headers: Record<string, string>,
  body?: unknown,
  status = 200,
): Promise<Reply> {
  const reply = await service.send(method, path, headers, body);
  if (reply.status !== status)
    throw new Error(`${method} ${path}: ${reply.status} (expected ${status}) ${reply.body}`);
  return reply;
}

function putPlan(name: string, limits: object): Promise<Reply> {
  return call(a, 'PUT', `/admin/plans/${name}`, OPERATOR, { limits });
}

interface User {
  subject: string;
  key: string;
}

/** A user holding `plan` (an entry from an hour ago), active on both instances once answered. */
async function userOn(plan: string): Promise<User> {
  const created = json<{ apiKey: string; profile: { subject: string } }>(
    await call(a, 'POST', '/admin/users', OPERATOR, {
      email: `by-plan-${Math.random().toString(36).slice(2)}@example.com`,
    }),
  );
  const user = { subject: created.profile.subject, key: created.apiKey };
  await setPlans(user, [{ planName: plan, since: iso(Date.now() - HOUR) }]);
  // Neither instance has read the user's entries yet: both see the plan at once.
  for (const service of [a, b])
    expect(json<{ plan: { name: string } | null }>(await me(service, user)).plan?.name).toBe(plan);
  return user;
}

function setPlans(user: User, entries: { planName: string; since: string }[]): Promise<Reply> {
  return call(
    a,
    'PUT',
    `/admin/users/${encodeURIComponent(user.subject)}/plans`,
    OPERATOR,
    entries.map((entry) => ({ ...entry, until: iso(Date.now() + 24 * HOUR) })),
  );
}

const me = (service: ServiceProcess, user: User) => call(service, 'GET', '/me', keyed(user.key));

/**
 * The problem of a refusal at a limit of the plan: PLAN_LIMIT_EXCEEDED with its members (a bulk
 * result's `error` and an import's result line carry the status beside it).
 */
function expectPlanRefusal(
  problem: Record<string, unknown>,
  members: { limit: string; max: number; usage?: number },
  plan = PLAN,
): void {
  expect(problem).toMatchObject({ code: 'PLAN_LIMIT_EXCEEDED', ...members, plan });
  // Without an exact usage (items: stored ones and creates under way), at least the limit.
  if (members.usage === undefined)
    expect(problem.usage as number).toBeGreaterThanOrEqual(members.max);
}

function expectRefusedReply(
  reply: Reply,
  members: { limit: string; max: number; usage?: number },
  plan = PLAN,
): void {
  expect(reply.status).toBe(409);
  expect(reply.headers['content-type']).toMatch(/^application\/problem\+json/);
  expect(json(reply).status).toBe(409);
  expectPlanRefusal(json(reply), members, plan);
}

/** POST /import of these lines, as NDJSON with its Content-Length; the result lines and totals. */
async function importLines(
  service: ServiceProcess,
  user: User,
  lines: object[],
): Promise<{ results: Line[]; totals: Line }> {
  const body = Buffer.from(lines.map((line) => `${JSON.stringify(line)}\n`).join(''));
  const reply = await call(
    service,
    'POST',
    '/import',
    { ...keyed(user.key), 'Content-Type': 'application/x-ndjson' },
    new RawBody(body),
  );
  const parsed = parseLines(reply.body);
  return { results: parsed.slice(0, -1), totals: parsed.at(-1) ?? {} };
}

const itemLine = (collection: string, item: object) => ({ type: 'item', collection, item });

async function registryEntry(user: User, collection: string): Promise<Document | null> {
  return t.connection
    .collection('data_collections')
    .findOne({ tenantKind: 'user', tenant: user.subject, name: collection });
}

/** The ids stored in the collection, sorted, read from the database itself. */
async function storedIds(user: User, collection: string): Promise<string[]> {
  const entry = await registryEntry(user, collection);
  if (!entry) return [];
  const docs = await nativeCollection(t, entry)
    .find({}, { projection: { _id: 1 } })
    .toArray();
  return docs.map((doc) => String(doc._id)).sort();
}

/** The item ids the collection's places are held for, sorted. */
async function placeHolders(user: User, collection: string): Promise<string[]> {
  const entry = await registryEntry(user, collection);
  const docs = await companionCollection(t, entry, 'data_item_places')
    .find({ physical: entry?.physical })
    .toArray();
  return docs.map((doc) => String(doc.itemId)).sort();
}

/** The user's documents of a main-database collection. */
const stored = (collection: string, user: User) =>
  t.connection.collection(collection).countDocuments({ tenantKind: 'user', tenant: user.subject });

const upload = (service: ServiceProcess, user: User, name: string, bytes: number) =>
  service.send(
    'POST',
    `/files?name=${name}`,
    { ...keyed(user.key), 'Content-Type': 'application/octet-stream' },
    new RawBody(Buffer.alloc(bytes, name)),
  );

const webhook = (i: number) => ({ url: `http://127.0.0.1:9/hook-${i}`, events: ['created'] });

describe('concurrent writers through two instances, under a plan', () => {
  it('store exactly itemsPerCollection items by POST, bulk, find-or-create and import lines', async () => {
    const user = await userOn(PLAN);
    type BulkResult = { status: number; _id?: string; error?: Record<string, unknown> };
    // Every kind of create at once, half through each instance: 22 candidates for 5 places.
    const posts = Array.from({ length: 6 }, (_, i) =>
      instance(i).send('POST', '/data/notes', keyed(user.key), { item: { _id: `p${i}` } }),
    );
    const bulks = ['x', 'y'].map((prefix, i) =>
      instance(i).send('POST', '/data/notes/bulk', keyed(user.key), {
        items: Array.from({ length: 3 }, (_, j) => ({ _id: `${prefix}${j}` })),
      }),
    );
    const finds = Array.from({ length: 4 }, (_, i) =>
      instance(i).send('POST', '/data/notes', keyed(user.key), {
        item: { _id: `f${i}`, code: `c${i}` },
        uniqueField: 'code',
        onConflict: 'return',
      }),
    );
    const imports = ['m', 'n'].map((prefix, i) =>
      importLines(
        instance(i + 1),
        user,
        Array.from({ length: 3 }, (_, j) => itemLine('notes', { _id: `${prefix}${j}` })),
      ),
    );
    const [postReplies, bulkReplies, findReplies, importReplies] = await Promise.all([
      Promise.all(posts),
      Promise.all(bulks),
      Promise.all(finds),
      Promise.all(imports),
    ]);

    const created: string[] = [];
    let refused = 0;
    for (const reply of [...postReplies, ...findReplies]) {
      if (reply.status === 200) created.push(json<{ _id: string }>(reply)._id);
      else {
        expectRefusedReply(reply, { limit: 'itemsPerCollection', max: ITEMS });
        refused += 1;
      }
    }
    for (const reply of bulkReplies) {
      expect(reply.status).toBe(200);
      for (const result of json<{ results: BulkResult[] }>(reply).results) {
        if (result.status === 200) created.push(result._id as string);
        else {
          expect(result.status).toBe(409);
          expectPlanRefusal(result.error ?? {}, { limit: 'itemsPerCollection', max: ITEMS });
          refused += 1;
        }
      }
    }
    for (const { results, totals } of importReplies) {
      // Each line's result names its own refusal, and the import went on with the next line.
      expect(results).toHaveLength(3);
      for (const result of results) {
        if (result.status === 201) created.push(result._id as string);
        else {
          expect(result.status).toBe(409);
          expectPlanRefusal(result, { limit: 'itemsPerCollection', max: ITEMS });
          refused += 1;
        }
      }
      expect(totals).toMatchObject({
        type: 'totals',
        created: results.filter((r) => r.status === 201).length,
        failed: results.filter((r) => r.status === 409).length,
      });
    }
    expect(created).toHaveLength(ITEMS);
    expect(refused).toBe(6 + 6 + 4 + 6 - ITEMS);

    // Exactly the answered items are stored, each holding one place: a refusal left nothing.
    expect(await storedIds(user, 'notes')).toEqual([...created].sort());
    expect(await placeHolders(user, 'notes')).toEqual([...created].sort());
    // No unique claim of a refused find-or-create: its value can be taken once there is room.
    const refusedCodes = findReplies.flatMap((r, i) => (r.status === 200 ? [] : [`c${i}`]));
    const gone = created[0]!;
    expect((await b.send('DELETE', `/data/notes/_id/${gone}`, keyed(user.key))).status).toBe(204);
    if (refusedCodes.length > 0) {
      const retried = await a.send('POST', '/data/notes', keyed(user.key), {
        item: { code: refusedCodes[0] },
        uniqueField: 'code',
        onConflict: 'return',
      });
      expect(retried.status).toBe(200);
      expect(json(retried)).toMatchObject({ code: refusedCodes[0] });
    } else
      expect(
        (await a.send('POST', '/data/notes', keyed(user.key), { item: { _id: 'again' } })).status,
      ).toBe(200);
    expect(await storedIds(user, 'notes')).toHaveLength(ITEMS);
    expect(json(await b.send('GET', '/data/notes/count', keyed(user.key)))).toEqual({
      count: ITEMS,
    });
  });

  it('create exactly `collections` collections by first writes of every kind, refusing the rest whole', async () => {
    const user = await userOn(PLAN);
    const kinds = ['post', 'bulk', 'import'] as const;
    const writers = Array.from({ length: 3 * COLLECTIONS }, (_, i) => {
      const collection = `c${i}`;
      const kind = kinds[i % kinds.length]!;
      const service = instance(i);
      if (kind === 'post')
        return service
          .send('POST', `/data/${collection}`, keyed(user.key), { item: { i } })
          .then((reply) => ({ collection, kind, reply }));
      if (kind === 'bulk')
        return service
          .send('POST', `/data/${collection}/bulk`, keyed(user.key), { items: [{ i }] })
          .then((reply) => ({ collection, kind, reply }));
      return importLines(service, user, [itemLine(collection, { i })]).then((imported) => ({
        collection,
        kind,
        imported,
      }));
    });
    const outcomes = await Promise.all(writers);
    const made: string[] = [];
    for (const outcome of outcomes) {
      if ('imported' in outcome) {
        const [result] = outcome.imported.results;
        if (result?.status === 201) made.push(outcome.collection);
        else {
          expect(result?.status).toBe(409);
          expectPlanRefusal(result ?? {}, {
            limit: 'collections',
            max: COLLECTIONS,
            usage: COLLECTIONS,
          });
        }
      } else if (outcome.kind === 'bulk') {
        // Bulk answers 200 with the item's result: created, or refused with the problem.
        expect(outcome.reply.status).toBe(200);
        const [result] = json<{ results: { status: number; error?: Record<string, unknown> }[] }>(
          outcome.reply,
        ).results;
        if (result?.status === 200) made.push(outcome.collection);
        else {
          expect(result?.status).toBe(409);
          expectPlanRefusal(result?.error ?? {}, {
            limit: 'collections',
            max: COLLECTIONS,
            usage: COLLECTIONS,
          });
        }
      } else if (outcome.reply.status === 200) made.push(outcome.collection);
      else
        expectRefusedReply(outcome.reply, {
          limit: 'collections',
          max: COLLECTIONS,
          usage: COLLECTIONS,
        });
    }
    expect(made).toHaveLength(COLLECTIONS);
    // Nothing half-written: a registry entry and a collection slot for each made one only, and
    // no item of a refused one.
    expect(await stored('data_collections', user)).toBe(COLLECTIONS);
    expect(
      json<{ name: string }[]>(await b.send('GET', '/data', keyed(user.key)))
        .map((c) => c.name)
        .sort(),
    ).toEqual([...made].sort());
    for (const { collection } of outcomes.filter((o) => !made.includes(o.collection)))
      expect((await a.send('GET', `/data/${collection}`, keyed(user.key))).status).toBe(204);
  });

  it('store at most fileBytes of files, each refused upload leaving no file and no counted byte', async () => {
    const user = await userOn(PLAN);
    const fits = Math.floor(FILE_BYTES_LIMIT / FILE_BYTES);
    const replies = await Promise.all(
      Array.from({ length: 2 * fits }, (_, i) => upload(instance(i), user, `f${i}`, FILE_BYTES)),
    );
    expect(replies.filter((r) => r.status === 201)).toHaveLength(fits);
    for (const reply of replies.filter((r) => r.status !== 201))
      expectRefusedReply(reply, {
        limit: 'fileBytes',
        max: FILE_BYTES_LIMIT,
        usage: fits * FILE_BYTES,
      });
    const files = json<{ size: number }[]>(await b.send('GET', '/files', keyed(user.key)));
    expect(files.map((f) => f.size)).toEqual(Array<number>(fits).fill(FILE_BYTES));
    for (const service of [a, b])
      expect(
        json<{ limits: Record<string, unknown> }>(await me(service, user)).limits.fileBytes,
      ).toEqual({ limit: FILE_BYTES_LIMIT, used: fits * FILE_BYTES });
  });

  it('create exactly `webhooks` webhooks, each refusal naming the limit, and a delete frees a place', async () => {
    const user = await userOn(PLAN);
    const replies = await Promise.all(
      Array.from({ length: 3 * WEBHOOKS }, (_, i) =>
        instance(i).send('POST', '/webhooks', keyed(user.key), webhook(i)),
      ),
    );
    expect(replies.filter((r) => r.status === 200)).toHaveLength(WEBHOOKS);
    for (const reply of replies.filter((r) => r.status !== 200))
      expectRefusedReply(reply, { limit: 'webhooks', max: WEBHOOKS, usage: WEBHOOKS });
    // Nothing half-written: as many webhooks and slots as created.
    expect(await stored('webhooks', user)).toBe(WEBHOOKS);
    expect(await stored('webhook_slots', user)).toBe(WEBHOOKS);
    const listed = json<{ id: string }[]>(await b.send('GET', '/webhooks', keyed(user.key)));
    expect(listed).toHaveLength(WEBHOOKS);
    expect((await a.send('DELETE', `/webhooks/${listed[0]!.id}`, keyed(user.key))).status).toBe(
      204,
    );
    const again = await Promise.all([
      a.send('POST', '/webhooks', keyed(user.key), webhook(100)),
      b.send('POST', '/webhooks', keyed(user.key), webhook(101)),
    ]);
    expect(again.map((r) => r.status).sort()).toEqual([200, 409]);
    expect(await stored('webhooks', user)).toBe(WEBHOOKS);
    expect(await stored('webhook_slots', user)).toBe(WEBHOOKS);
  });
});

describe('a downgrade by a new plan entry, then a catalogue edit', () => {
  const LOWER = 'smaller';
  const LOWER_LIMITS = { itemsPerCollection: 2, collections: 1, webhooks: 1, fileBytes: 1000 };

  it('is refused growth on both instances within PLAN_CACHE_MS, and keeps everything readable, deletable and exportable', async () => {
    await putPlan(LOWER, LOWER_LIMITS);
    const user = await userOn(PLAN);
    const ids = Array.from({ length: ITEMS }, (_, i) => `d${i}`);
    for (const [i, id] of ids.entries())
      await call(instance(i), 'POST', '/data/full', keyed(user.key), { item: { _id: id, i } });
    await call(b, 'POST', '/data/other', keyed(user.key), { item: { _id: 'o0' } });
    await call(a, 'POST', '/data/third', keyed(user.key), { item: { _id: 't0' } });
    for (let i = 0; i < WEBHOOKS; i += 1)
      await call(instance(i), 'POST', '/webhooks', keyed(user.key), webhook(i));
    // A file that fills the plan's bytes but for a few: any upload after it is growth past them.
    const kept = FILE_BYTES_LIMIT - 10;
    const file = await upload(a, user, 'kept', kept);
    expect(file.status).toBe(201);
    const fileId = json<{ id: string }>(file).id;

    // Each probe is a write the tenant is refused under either plan (it is at every limit of
    // the first one), so polling it never grows anything; it tells the plans apart by `max`.
    const probes = {
      itemsPerCollection: (s: ServiceProcess) =>
        s.send('POST', '/data/full', keyed(user.key), { item: { _id: 'probe' } }),
      collections: (s: ServiceProcess) =>
        s.send('POST', '/data/probe', keyed(user.key), { item: {} }),
      webhooks: (s: ServiceProcess) => s.send('POST', '/webhooks', keyed(user.key), webhook(99)),
      fileBytes: (s: ServiceProcess) => upload(s, user, 'probe', 100),
    };
    const before = {
      itemsPerCollection: { max: ITEMS, usage: ITEMS },
      collections: { max: COLLECTIONS, usage: COLLECTIONS },
      webhooks: { max: WEBHOOKS, usage: WEBHOOKS },
      fileBytes: { max: FILE_BYTES_LIMIT, usage: kept },
    };
    // Both instances hold the first plan (read and kept) before the change.
    for (const service of [a, b])
      for (const [limit, probe] of Object.entries(probes))
        expectRefusedReply(await probe(service), {
          limit,
          ...before[limit as keyof typeof before],
        });

    await setPlans(user, [
      { planName: PLAN, since: iso(Date.now() - HOUR) },
      { planName: LOWER, since: iso(Date.now() - HOUR / 2) },
    ]);
    const written = performance.now();
    for (const service of [a, b])
      await seenWithinCacheTime(
        `every limit of ${LOWER} on ${service === a ? 'A' : 'B'}`,
        written,
        async () => {
          for (const [limit, probe] of Object.entries(probes)) {
            const reply = await probe(service);
            // Under either plan the probe is refused: it never grew anything.
            expect(reply.status).toBe(409);
            if (json(reply).max !== LOWER_LIMITS[limit as keyof typeof LOWER_LIMITS]) return false;
          }
          return true;
        },
      );

    // Refused growth names the new plan, its limits and the usage over them.
    for (const service of [a, b]) {
      expectRefusedReply(
        await probes.itemsPerCollection(service),
        { limit: 'itemsPerCollection', max: 2, usage: ITEMS },
        LOWER,
      );
      expectRefusedReply(
        await probes.collections(service),
        { limit: 'collections', max: 1, usage: 3 },
        LOWER,
      );
      expectRefusedReply(
        await probes.webhooks(service),
        { limit: 'webhooks', max: 1, usage: WEBHOOKS },
        LOWER,
      );
      expectRefusedReply(
        await probes.fileBytes(service),
        { limit: 'fileBytes', max: 1000, usage: kept },
        LOWER,
      );
      const imported = await importLines(service, user, [itemLine('full', { _id: 'imp' })]);
      expectPlanRefusal(
        imported.results[0] ?? {},
        { limit: 'itemsPerCollection', max: 2, usage: ITEMS },
        LOWER,
      );
    }

    // Every item stays readable on both instances, and exportable.
    for (const service of [a, b]) {
      for (const id of ids)
        expect(json(await call(service, 'GET', `/data/full/_id/${id}`, keyed(user.key)))).toEqual(
          expect.objectContaining({ _id: id }),
        );
      const exported = parseLines(
        (await call(service, 'GET', '/export', keyed(user.key))).body,
      ).filter((line) => line.type === 'item');
      expect(exported.map((line) => String((line.item as { _id: string })._id)).sort()).toEqual(
        [...ids, 'o0', 't0'].sort(),
      );
      expect((await service.send('GET', `/files/${fileId}/content`, keyed(user.key))).status).toBe(
        200,
      );
    }
    // Writes that grow nothing go on: an update in place, a create in a collection under the
    // new limit (it adds no collection).
    await call(a, 'PUT', '/data/full/_id/d0', keyed(user.key), { values: { seen: true } });
    await call(b, 'POST', '/data/other', keyed(user.key), { item: { _id: 'o1' } });
    expectRefusedReply(
      await a.send('POST', '/data/other', keyed(user.key), { item: { _id: 'o2' } }),
      { limit: 'itemsPerCollection', max: 2, usage: 2 },
      LOWER,
    );

    // Deletes go on; a collection still at or over the limit refuses creates until it is below.
    for (const [i, id] of ['d0', 'd1', 'd2'].entries())
      await call(instance(i), 'DELETE', `/data/full/_id/${id}`, keyed(user.key), undefined, 204);
    expectRefusedReply(
      await b.send('POST', '/data/full', keyed(user.key), { item: { _id: 'new' } }),
      { limit: 'itemsPerCollection', max: 2, usage: 2 },
      LOWER,
    );
    await call(a, 'DELETE', '/data/full/_id/d3', keyed(user.key), undefined, 204);
    // One item under a limit of two: of concurrent creates through both instances, one fits.
    const racing = await Promise.all(
      ['n0', 'n1', 'n2', 'n3'].map((id, i) =>
        instance(i).send('POST', '/data/full', keyed(user.key), { item: { _id: id } }),
      ),
    );
    expect(racing.filter((r) => r.status === 200)).toHaveLength(1);
    for (const reply of racing.filter((r) => r.status !== 200))
      expectRefusedReply(reply, { limit: 'itemsPerCollection', max: 2 }, LOWER);
    expect(await storedIds(user, 'full')).toHaveLength(2);
    expect(await placeHolders(user, 'full')).toEqual(await storedIds(user, 'full'));

    // The other kinds: deleting below the limit lets one more in.
    const hooks = json<{ id: string }[]>(await call(a, 'GET', '/webhooks', keyed(user.key)));
    for (const hook of hooks)
      await call(b, 'DELETE', `/webhooks/${hook.id}`, keyed(user.key), undefined, 204);
    await call(a, 'POST', '/webhooks', keyed(user.key), webhook(200));
    expectRefusedReply(
      await b.send('POST', '/webhooks', keyed(user.key), webhook(201)),
      { limit: 'webhooks', max: 1, usage: 1 },
      LOWER,
    );
    await call(b, 'DELETE', `/files/${fileId}`, keyed(user.key), undefined, 204);
    expect((await upload(a, user, 'small', 100)).status).toBe(201);
    for (const name of ['other', 'third', 'full'])
      await call(a, 'DELETE', `/data/${name}`, keyed(user.key), undefined, 204);
    await call(b, 'POST', '/data/fresh', keyed(user.key), { item: {} });
    expectRefusedReply(
      await a.send('POST', '/data/fresher', keyed(user.key), { item: {} }),
      { limit: 'collections', max: 1, usage: 1 },
      LOWER,
    );

    // A catalogue edit of the plan the tenant holds takes effect the same way: a full collection
    // refuses creates (max 2) until the edit is seen, then admits one more, on each instance
    // within PLAN_CACHE_MS. A's create fills it again, so B's is refused under the new limit.
    await call(a, 'POST', '/data/fresh', keyed(user.key), { item: {} });
    const full = (s: ServiceProcess, id: string) =>
      s.send('POST', '/data/fresh', keyed(user.key), { item: { _id: id } });
    expectRefusedReply(await full(b, 'early'), { limit: 'itemsPerCollection', max: 2 }, LOWER);
    await putPlan(LOWER, { ...LOWER_LIMITS, itemsPerCollection: 3 });
    const edited = performance.now();
    await seenWithinCacheTime('the edit admits one more item through A', edited, async () => {
      const reply = await full(a, 'after-edit');
      if (reply.status === 200) return true;
      expectRefusedReply(reply, { limit: 'itemsPerCollection', max: 2, usage: 2 }, LOWER);
      return false;
    });
    await seenWithinCacheTime('the edit is seen by B', edited, async () => {
      const reply = await full(b, 'after-edit-b');
      expect(reply.status).toBe(409);
      return json(reply).max === 3;
    });
    expectRefusedReply(
      await full(b, 'after-edit-b'),
      { limit: 'itemsPerCollection', max: 3, usage: 3 },
      LOWER,
    );
    expect(await storedIds(user, 'fresh')).toHaveLength(3);
    expect((await placeHolders(user, 'fresh')).sort()).toEqual(await storedIds(user, 'fresh'));
  }, 60_000);
});
