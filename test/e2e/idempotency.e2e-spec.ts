import { writesItems } from '../../src/common/http/openapi-shared';
import { MongoClient } from 'mongodb';
import { randomUUID } from 'node:crypto';
import type { Response as SupertestResponse } from 'supertest';
import { ItemsService } from '../../src/data/items/items.service';
import {
  TEST_ADMIN_KEY,
  testDatabaseUri,
  uniqueDbName,
  createTestApp,
  type TestApp,
} from '../support/app';
import {
  createApiKey,
  createSubKey,
  createTeam,
  createUser,
  type TestUser,
} from '../support/factories';
import { as, asOperator, type Client } from '../support/http';
import { expectProblem } from '../support/problems';
import { startService, type Reply, type ServiceProcess } from '../support/service-process';

/**
 * Idempotency-Key: a repeat gets the first response and changes nothing, another request with
 * the key is refused, a repeat of a running request waits its turn, keys never cross principals
 * or branches, expired records go, and all of it holds across two instances on one database.
 */
const RECORDS = 'idempotency_records';
const REPLAYED = 'idempotent-replayed';

const newKey = () => randomUUID();
const withKey = (key: string, headers: Record<string, string> = {}) => ({
  headers: { 'Idempotency-Key': key, ...headers },
});

/** What a replay must reproduce exactly. */
const outcome = (res: SupertestResponse) => ({
  status: res.status,
  text: res.text,
  contentType: res.headers['content-type'],
  etag: res.headers.etag,
});

/** A promise and the function that resolves it. */
function gate(): { opened: Promise<void>; open: () => void } {
  let open!: () => void;
  const opened = new Promise<void>((resolve) => (open = resolve));
  return { opened, open };
}

/**
 * Holds ItemsService.create until `release` is called, and reports when a request has entered it:
 * the first request with a key is then running, deterministically, for as long as the test wants.
 */
function holdItemCreation(t: TestApp): {
  entered: Promise<void>;
  release: () => void;
  restore: () => void;
} {
  const items = t.app.get(ItemsService);
  const original = items.create.bind(items);
  const entered = gate();
  const released = gate();
  const spy = jest.spyOn(items, 'create').mockImplementation(async (...args) => {
    entered.open();
    await released.opened;
    return original(...args);
  });
  return { entered: entered.opened, release: released.open, restore: () => spy.mockRestore() };
}

/**
 * Sends a request until it is not 409 IDEMPOTENCY_IN_PROGRESS, waiting Retry-After seconds in
 * between, as a client does; at most `tries` times.
 */
async function untilSettled<R extends { status: number; retryAfter?: string; code?: unknown }>(
  send: () => Promise<R>,
  tries = 20,
): Promise<R> {
  for (let attempt = 1; ; attempt += 1) {
    const reply = await send();
    if (reply.status !== 409 || reply.code !== 'IDEMPOTENCY_IN_PROGRESS' || attempt >= tries) {
      return reply;
    }
    await new Promise((resolve) => setTimeout(resolve, Number(reply.retryAfter) * 1000));
  }
}

describe('Idempotency-Key', () => {
  let t: TestApp;
  let user: TestUser;
  let api: Client;

  beforeAll(async () => {
    t = await createTestApp(__filename);
    user = await createUser(t);
    api = as(t, user);
  });

  afterAll(async () => {
    await t?.close();
  });

  it("comes after the guards that refuse a request: a write the key's collection limit refused claims no key", async () => {
    const limited = await createApiKey(t, user, { collections: { allowed: 'write' } });
    const client = as(t, limited);
    const key = newKey();
    // Refused before the key is looked at: nothing is kept for it.
    expectProblem(
      await client.post('/data/elsewhere', { item: { text: 'no' } }, withKey(key)),
      403,
      'COLLECTION_NOT_ALLOWED',
    );
    // So the same key is still free for a request of its own; had the refusal been kept, this
    // one would be refused as another request under a used key.
    const first = await client.post('/data/allowed', { item: { text: 'yes' } }, withKey(key));
    expect(first.status).toBe(200);
    expect(first.headers[REPLAYED]).toBeUndefined();
    const repeat = await client.post('/data/allowed', { item: { text: 'yes' } }, withKey(key));
    expect(repeat.headers[REPLAYED]).toBe('true');
    expect(outcome(repeat)).toEqual(outcome(first));
  });

  const countItems = async (collection: string, client: Client = api) =>
    (await client.get(`/data/${collection}/count`).expect(200)).body.count as number;

  describe('replays', () => {
    it('answers a repeat with the first response and Idempotent-Replayed: true, creating nothing new', async () => {
      const key = newKey();
      const first = await api
        .post('/data/notes', { item: { text: 'once' } }, withKey(key))
        .expect(200);
      expect(first.headers[REPLAYED]).toBeUndefined();
      const repeat = await api
        .post('/data/notes', { item: { text: 'once' } }, withKey(key))
        .expect(200);
      expect(repeat.headers[REPLAYED]).toBe('true');
      expect(outcome(repeat)).toEqual(outcome(first));
      expect(await countItems('notes')).toBe(1);
      // The request's own headers are its own.
      expect(repeat.headers['x-request-id']).not.toBe(first.headers['x-request-id']);
    });

    it('treats a quoted key as the same key', async () => {
      const key = newKey();
      const first = await api.post('/project', { name: 'Quoted' }, withKey(key)).expect(200);
      const repeat = await api
        .post('/project', { name: 'Quoted' }, withKey(`"${key}"`))
        .expect(200);
      expect(repeat.headers[REPLAYED]).toBe('true');
      expect(repeat.body.id).toBe(first.body.id);
    });

    it('keeps a 4xx outcome and replays it without running the request again', async () => {
      const taken = await api
        .post('/data/orders', { item: { number: 'A-1' }, uniqueField: 'number' })
        .expect(200);
      const key = newKey();
      const body = { item: { number: 'A-1' }, uniqueField: 'number' };
      const first = await api.post('/data/orders', body, withKey(key)).expect(409);
      expectProblem(first, 409, 'DUPLICATE_ITEM');
      // Were it run again, the request would now succeed.
      await api.delete(`/data/orders/_id/${taken.body._id}`).expect(204);
      const repeat = await api.post('/data/orders', body, withKey(key)).expect(409);
      expect(repeat.headers[REPLAYED]).toBe('true');
      expect(outcome(repeat)).toEqual(outcome(first));
      expect(await countItems('orders')).toBe(0);
    });

    it('gives the key back after a 5xx: a retry runs again', async () => {
      const items = t.app.get(ItemsService);
      const spy = jest
        .spyOn(items, 'create')
        .mockRejectedValueOnce(new Error('the handler failed unexpectedly'));
      try {
        const key = newKey();
        const body = { item: { text: 'after a failure' } };
        const failed = await api.post('/data/retried', body, withKey(key)).expect(500);
        expectProblem(failed, 500, 'INTERNAL_ERROR');
        const retry = await api.post('/data/retried', body, withKey(key)).expect(200);
        expect(retry.headers[REPLAYED]).toBeUndefined();
        expect(await countItems('retried')).toBe(1);
      } finally {
        spy.mockRestore();
      }
    });

    it('keeps a new API key readable only with the Idempotency-Key, and replays it', async () => {
      const key = newKey();
      const first = await api.post('/api-keys', { name: 'ci' }, withKey(key)).expect(200);
      const repeat = await api.post('/api-keys', { name: 'ci' }, withKey(key)).expect(200);
      expect(repeat.headers[REPLAYED]).toBe('true');
      expect(repeat.body.apiKey).toBe(first.body.apiKey);
      const stored = await t.connection.collection(RECORDS).find({}).toArray();
      const raw = JSON.stringify(
        stored.map((doc) => ({ ...doc, response: doc.response?.toString('base64') })),
      );
      const bytes = Buffer.concat(stored.map((doc) => Buffer.from(doc.response?.buffer ?? [])));
      expect(raw).not.toContain(key);
      expect(bytes.length).toBeGreaterThan(0);
      expect(bytes.includes(first.body.apiKey as string)).toBe(false);
    });

    it('replays the operator’s creates too', async () => {
      const key = newKey();
      const body = { name: `team-${key.slice(0, 8)}` };
      const first = await asOperator(t).post('/admin/teams', body, withKey(key)).expect(200);
      const repeat = await asOperator(t).post('/admin/teams', body, withKey(key)).expect(200);
      expect(repeat.headers[REPLAYED]).toBe('true');
      expect(repeat.body).toEqual(first.body);
    });
  });

  describe('refusals', () => {
    it('answers the same key with another body, path or method with 422 and does nothing', async () => {
      const key = newKey();
      await api.post('/data/reuse', { item: { n: 1 } }, withKey(key)).expect(200);
      for (const res of [
        await api.post('/data/reuse', { item: { n: 2 } }, withKey(key)),
        await api.post('/data/reuse-elsewhere', { item: { n: 1 } }, withKey(key)),
        await api.post('/project', { name: 'n' }, withKey(key)),
      ]) {
        expectProblem(res, 422, 'IDEMPOTENCY_KEY_REUSED');
      }
      expect(await countItems('reuse')).toBe(1);
      expect(await countItems('reuse-elsewhere')).toBe(0);
    });

    it('answers the same key under another If-Match with 422', async () => {
      const created = await api.post('/project', { name: 'Tagged' }).expect(200);
      const key = newKey();
      const path = `/project/${created.body.id}`;
      const first = await api
        .put(
          path,
          { name: 'Renamed' },
          withKey(key, { 'If-Match': created.headers.etag as string }),
        )
        .expect(200);
      const other = await api.put(path, { name: 'Renamed' }, withKey(key, { 'If-Match': '*' }));
      expectProblem(other, 422, 'IDEMPOTENCY_KEY_REUSED');
      const repeat = await api
        .put(
          path,
          { name: 'Renamed' },
          withKey(key, { 'If-Match': created.headers.etag as string }),
        )
        .expect(200);
      expect(outcome(repeat)).toEqual(outcome(first));
    });

    it.each([
      ['a space', 'a b'],
      ['256 characters', 'k'.repeat(256)],
      ['empty quotes', '""'],
      ['a character beyond ASCII', 'cl\u00e9'],
    ])(
      'refuses a key with %s with 400 INVALID_IDEMPOTENCY_KEY and runs nothing',
      async (_name, key) => {
        const res = await api.post('/data/badkeys', { item: { n: 1 } }, withKey(key));
        expectProblem(res, 400, 'INVALID_IDEMPOTENCY_KEY');
        expect(res.body.errors).toEqual([{ field: 'Idempotency-Key', message: 'not a valid key' }]);
        expect(await countItems('badkeys')).toBe(0);
      },
    );

    it('answers a repeat while the first request runs with 409 and Retry-After, never running it twice', async () => {
      const hold = holdItemCreation(t);
      try {
        const key = newKey();
        const body = { item: { text: 'slow' } };
        const first = api.post('/data/slow', body, withKey(key)).then((res) => res);
        await hold.entered;
        const repeat = await api.post('/data/slow', body, withKey(key));
        expectProblem(repeat, 409, 'IDEMPOTENCY_IN_PROGRESS');
        expect(repeat.headers['retry-after']).toBe('1');
        // A different request with the key is still a 422, running or not.
        expectProblem(
          await api.post('/data/slow', { item: {} }, withKey(key)),
          422,
          'IDEMPOTENCY_KEY_REUSED',
        );
        hold.release();
        const done = await first;
        expect(done.status).toBe(200);
        const after = await api.post('/data/slow', body, withKey(key)).expect(200);
        expect(after.headers[REPLAYED]).toBe('true');
        expect(outcome(after)).toEqual(outcome(done));
        expect(await countItems('slow')).toBe(1);
      } finally {
        hold.restore();
      }
    });
  });

  describe('scope', () => {
    it('keeps the same key of two principals apart: each runs, neither sees the other’s response', async () => {
      const other = await createUser(t);
      const team = await createTeam(t);
      const key = newKey();
      const body = { name: 'Same key' };
      const answers = [];
      for (const client of [api, as(t, other), as(t, team)]) {
        answers.push(await client.post('/project', body, withKey(key)).expect(200));
      }
      expect(answers.map((res) => res.headers[REPLAYED])).toEqual([
        undefined,
        undefined,
        undefined,
      ]);
      expect(new Set(answers.map((res) => res.body.id)).size).toBe(3);
      // Each principal's repeat replays its own.
      const again = await as(t, other).post('/project', body, withKey(key)).expect(200);
      expect(again.body.id).toBe(answers[1]!.body.id);
    });

    it('keeps a user’s and its sub profile’s keys apart, and the keys of two branches', async () => {
      const sub = await createSubKey(t, user);
      const key = newKey();
      const body = { item: { text: 'mine' } };
      const byRoot = await api.post('/data/scoped', body, withKey(key)).expect(200);
      const bySub = await as(t, sub).post('/data/scoped', body, withKey(key)).expect(200);
      const inBranch = await api
        .post('/data/scoped', body, withKey(key, { 'X-Branch': 'feature' }))
        .expect(200);
      for (const res of [bySub, inBranch]) expect(res.headers[REPLAYED]).toBeUndefined();
      expect(new Set([byRoot, bySub, inBranch].map((res) => res.body._id)).size).toBe(3);
    });

    it('recognises a retry sent with another of the user’s keys', async () => {
      const second = await api.post('/api-keys', { name: 'rotated' }).expect(200);
      const key = newKey();
      const first = await api.post('/project', { name: 'Rotated' }, withKey(key)).expect(200);
      const retry = await as(t, second.body.apiKey as string)
        .post('/project', { name: 'Rotated' }, withKey(key))
        .expect(200);
      expect(retry.headers[REPLAYED]).toBe('true');
      expect(retry.body.id).toBe(first.body.id);
    });
  });

  describe('updates and deletes', () => {
    it('replays PUT and DELETE of a project; a DELETE repeated with its key is 204, not 404', async () => {
      const created = await api.post('/project', { name: 'Doomed' }).expect(200);
      const path = `/project/${created.body.id}`;
      const putKey = newKey();
      const put = await api.put(path, { tags: ['a'] }, withKey(putKey)).expect(200);
      const putAgain = await api.put(path, { tags: ['a'] }, withKey(putKey)).expect(200);
      expect(putAgain.headers[REPLAYED]).toBe('true');
      expect(outcome(putAgain)).toEqual(outcome(put));

      const deleteKey = newKey();
      await api.delete(path, undefined, withKey(deleteKey)).expect(204);
      const again = await api.delete(path, undefined, withKey(deleteKey)).expect(204);
      expect(again.headers[REPLAYED]).toBe('true');
      await api.delete(path).expect(404);
    });

    it('replays PUT and DELETE of a data item', async () => {
      const created = await api.post('/data/items', { item: { n: 1 } }).expect(200);
      const path = `/data/items/_id/${created.body._id}`;
      const putKey = newKey();
      const put = await api.put(path, { values: { n: 2 } }, withKey(putKey)).expect(200);
      // Another write in between: a replay still answers what the keyed PUT answered.
      await api.put(path, { values: { n: 3 } }).expect(200);
      const putAgain = await api.put(path, { values: { n: 2 } }, withKey(putKey)).expect(200);
      expect(putAgain.headers[REPLAYED]).toBe('true');
      expect(outcome(putAgain)).toEqual(outcome(put));
      expect((await api.get(path).expect(200)).body.n).toBe(3);

      const deleteKey = newKey();
      await api.delete(path, undefined, withKey(deleteKey)).expect(204);
      const again = await api.delete(path, undefined, withKey(deleteKey)).expect(204);
      expect(again.headers[REPLAYED]).toBe('true');
    });

    it('replays the Schema-Warnings of a write that a warning schema let through', async () => {
      await api.post('/data/warned', { item: { n: 'a' } }).expect(200);
      const schema = { type: 'object', properties: { n: { type: 'string' } } };
      await api.put('/data/warned/schema', { schema, action: 'warn' }).expect(200);
      const key = newKey();
      const first = await api.post('/data/warned', { item: { n: 1 } }, withKey(key)).expect(200);
      expect(first.headers['schema-warnings']).toEqual(expect.any(String));
      const again = await api.post('/data/warned', { item: { n: 1 } }, withKey(key)).expect(200);
      expect(again.headers[REPLAYED]).toBe('true');
      expect(again.headers['schema-warnings']).toBe(first.headers['schema-warnings']);
      expect(outcome(again)).toEqual(outcome(first));
    });

    it('ignores the header on operations that do not take it', async () => {
      const key = newKey();
      for (let i = 0; i < 2; i += 1) {
        const avatar = `https://example.com/${i}.png`;
        const res = await api.put('/profile', { avatar }, withKey(key)).expect(200);
        expect(res.headers[REPLAYED]).toBeUndefined();
        expect(res.body.avatar).toBe(avatar);
      }
    });
  });

  it('creates exactly one item for 50 concurrent identical POSTs with one key, and answers all alike', async () => {
    const key = newKey();
    const body = { item: { text: 'fifty' } };
    const replies = await Promise.all(
      Array.from({ length: 50 }, () =>
        untilSettled(async () => {
          const res = await api.post('/data/fifty', body, withKey(key));
          return {
            res,
            status: res.status,
            code: res.body.code,
            retryAfter: res.headers['retry-after'] as string,
          };
        }),
      ),
    );
    const outcomes = replies.map(({ res }) => outcome(res));
    expect(outcomes[0]!.status).toBe(200);
    for (const other of outcomes) expect(other).toEqual(outcomes[0]);
    expect(replies.filter(({ res }) => res.headers[REPLAYED] === undefined)).toHaveLength(1);
    expect(await countItems('fifty')).toBe(1);
  });

  it('documents the header on exactly the operations that take it, with its 409 and 422', async () => {
    const document = (await t.http().get('/docs-json').expect(200)).body as {
      paths: Record<
        string,
        Record<
          string,
          {
            parameters?: { name: string }[];
            responses: Record<
              string,
              { headers?: object; content?: Record<string, { examples?: object }> }
            >;
          }
        >
      >;
    };
    const keyed: string[] = [];
    for (const [path, item] of Object.entries(document.paths)) {
      for (const [method, operation] of Object.entries(item)) {
        if (!(operation.parameters ?? []).some((p) => p.name === 'Idempotency-Key')) continue;
        keyed.push(`${method} ${path}`);
        const examples = (status: string) =>
          Object.keys(
            operation.responses[status]?.content?.['application/problem+json']?.examples ?? {},
          );
        expect(examples('409')).toContain('IDEMPOTENCY_IN_PROGRESS');
        // Item writes may also meet their collection's schema.
        const itemWrite = writesItems(path, method);
        expect(examples('422')).toEqual([
          ...(itemWrite ? ['SCHEMA_VIOLATION'] : []),
          'IDEMPOTENCY_KEY_REUSED',
        ]);
        expect(examples('400')).toContain('INVALID_IDEMPOTENCY_KEY');
        expect(Object.keys(operation.responses['409']!.headers ?? {})).toContain('Retry-After');
      }
    }
    // Every POST but an import (it streams: repeated with mode=upsert instead, docs/data.md).
    const posts = Object.entries(document.paths)
      .filter(([path, item]) => 'post' in item && path !== '/import')
      .map(([path]) => `post ${path}`);
    expect(Object.keys(document.paths)).toContain('/import');
    expect(keyed.sort()).toEqual(
      [
        ...posts,
        'put /project/{projectId}',
        'delete /project/{projectId}',
        'put /data/{collection}/{indexName}/{indexValue}',
        'delete /data/{collection}/{indexName}/{indexValue}',
        'put /data/{collection}',
        'delete /data/{collection}',
        'patch /data/{collection}/{indexName}/{indexValue}',
      ].sort(),
    );
  });
});

describe('Idempotency-Key expiry and limits', () => {
  const TTL_MS = 600_000;
  const LEASE_MS = 300_000;
  const MAX_RESPONSE_BYTES = 1024;
  const ORIGIN = 'https://app.example.com';
  let t: TestApp;
  let api: Client;

  beforeAll(async () => {
    t = await createTestApp(__filename, {
      // Long enough that no test here depends on how fast the machine is: the tests of expiry
      // check the end a record was given, then move it into the past.
      IDEMPOTENCY_TTL_MS: String(TTL_MS),
      IDEMPOTENCY_LEASE_MS: String(LEASE_MS),
      IDEMPOTENCY_SWEEP_INTERVAL_MS: '1000',
      IDEMPOTENCY_MAX_RESPONSE_BYTES: String(MAX_RESPONSE_BYTES),
      CORS_ORIGINS: ORIGIN,
    });
    api = as(t, await createUser(t));
  });

  afterAll(async () => {
    await t?.close();
  });

  const records = () => t.connection.collection(RECORDS).countDocuments();

  /**
   * The record in `state`: its end must be `ms` after the moment its request ran (between `from`
   * and `to`). Then it is moved `ms` into the past: the record now looks as it will once that
   * time has passed.
   */
  async function ageRecord(state: string, ms: number, from: number, to: number): Promise<void> {
    const collection = t.connection.collection<{ _id: string; expiresAt: Date }>(RECORDS);
    const found = await collection.find({ state }).toArray();
    expect(found).toHaveLength(1);
    const [record] = found;
    const end = record!.expiresAt.getTime();
    expect(end).toBeGreaterThanOrEqual(from + ms);
    expect(end).toBeLessThanOrEqual(to + ms);
    await collection.updateOne({ _id: record!._id }, { $set: { expiresAt: new Date(end - ms) } });
  }

  it('removes expired records in the periodic sweep, after which the key runs again', async () => {
    const key = newKey();
    const sentAt = Date.now();
    const first = await api.post('/data/expiring', { item: { n: 1 } }, withKey(key)).expect(200);
    expect(await records()).toBe(1);
    await ageRecord('done', TTL_MS, sentAt, Date.now());
    const until = Date.now() + 15_000;
    while ((await records()) > 0 && Date.now() < until) {
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
    expect(await records()).toBe(0);
    const again = await api.post('/data/expiring', { item: { n: 1 } }, withKey(key)).expect(200);
    expect(again.headers[REPLAYED]).toBeUndefined();
    expect(again.body._id).not.toBe(first.body._id);
  });

  it('lets a browser send the key and read Idempotent-Replayed', async () => {
    const preflight = await t
      .http()
      .options('/data/browser')
      .set('Origin', ORIGIN)
      .set('Access-Control-Request-Method', 'POST')
      .set('Access-Control-Request-Headers', 'x-api-key,content-type,idempotency-key')
      .expect(204);
    expect(preflight.headers['access-control-allow-headers']).toMatch(/Idempotency-Key/i);
    const key = newKey();
    await api.post('/data/browser', { item: {} }, withKey(key, { Origin: ORIGIN })).expect(200);
    const replay = await api
      .post('/data/browser', { item: {} }, withKey(key, { Origin: ORIGIN }))
      .expect(200);
    expect(replay.headers[REPLAYED]).toBe('true');
    expect(replay.headers['access-control-expose-headers']).toMatch(/Idempotent-Replayed/i);
  });

  it('does not keep a response over IDEMPOTENCY_MAX_RESPONSE_BYTES: the key is given back', async () => {
    const key = newKey();
    const body = { item: { text: 'x'.repeat(MAX_RESPONSE_BYTES) } };
    const first = await api.post('/data/large', body, withKey(key)).expect(200);
    expect(first.text.length).toBeGreaterThan(MAX_RESPONSE_BYTES);
    const again = await api.post('/data/large', body, withKey(key)).expect(200);
    expect(again.headers[REPLAYED]).toBeUndefined();
    expect(again.body._id).not.toBe(first.body._id);
    // A smaller response with a key is kept as usual.
    const smallKey = newKey();
    await api.post('/data/large', { item: { text: 'small' } }, withKey(smallKey)).expect(200);
    const replayed = await api
      .post('/data/large', { item: { text: 'small' } }, withKey(smallKey))
      .expect(200);
    expect(replayed.headers[REPLAYED]).toBe('true');
  });

  it('frees the key of a request whose instance died once its lease ends', async () => {
    const key = newKey();
    // What a crashed request leaves behind: a running record, never completed.
    const hold = holdItemCreation(t);
    const sentAt = Date.now();
    const stuck = api.post('/data/crashed', { item: { n: 1 } }, withKey(key)).then((res) => res);
    await hold.entered;
    expectProblem(
      await api.post('/data/crashed', { item: { n: 1 } }, withKey(key)),
      409,
      'IDEMPOTENCY_IN_PROGRESS',
    );
    await ageRecord('running', LEASE_MS, sentAt, Date.now());
    // The lease is over: a retry runs (here while the held request still hangs: the window the
    // lease must be longer than any request to close).
    hold.restore();
    const retry = await api.post('/data/crashed', { item: { n: 1 } }, withKey(key)).expect(200);
    expect(retry.headers[REPLAYED]).toBeUndefined();
    hold.release();
    expect((await stuck).status).toBe(200);
  });
});

describe('Idempotency-Key across two instances', () => {
  const dbName = uniqueDbName(__filename);
  let a: ServiceProcess;
  let b: ServiceProcess;
  let key: string;

  beforeAll(async () => {
    // A generous connection bound: the instances start while other tests load the machine.
    const env = { MONGODB_DB_NAME: dbName, DB_SERVER_SELECTION_TIMEOUT_MS: '10000' };
    [a, b] = await Promise.all([startService(env), startService(env)]);
    const created = await a.send(
      'POST',
      '/admin/users',
      { 'X-Api-Key': TEST_ADMIN_KEY },
      {
        email: `idem-${randomUUID()}@example.com`,
      },
    );
    expect(created.status).toBe(200);
    key = (JSON.parse(created.body) as { apiKey: string }).apiKey;
  }, 180_000);

  afterAll(async () => {
    await Promise.all([a?.kill(), b?.kill()]);
    const client = new MongoClient(testDatabaseUri());
    try {
      await client.db(dbName).dropDatabase();
    } finally {
      await client.close();
    }
  });

  const headers = (idempotencyKey: string) => ({
    'X-Api-Key': key,
    'Idempotency-Key': idempotencyKey,
  });
  const count = async (collection: string) =>
    (
      JSON.parse((await a.send('GET', `/data/${collection}/count`, { 'X-Api-Key': key })).body) as {
        count: number;
      }
    ).count;
  const settled = (instance: ServiceProcess, path: string, idempotencyKey: string, body: unknown) =>
    untilSettled(async () => {
      const reply: Reply = await instance.send('POST', path, headers(idempotencyKey), body);
      const parsed = JSON.parse(reply.body) as { code?: unknown };
      return {
        reply,
        status: reply.status,
        code: parsed.code,
        retryAfter: reply.headers['retry-after'] as string,
      };
    });

  it('replays on the other instance what the first one answered', async () => {
    const idempotencyKey = newKey();
    const body = { item: { text: 'across' } };
    const first = await a.send('POST', '/data/across', headers(idempotencyKey), body);
    expect(first.status).toBe(200);
    const repeat = await b.send('POST', '/data/across', headers(idempotencyKey), body);
    expect(repeat.status).toBe(200);
    expect(repeat.headers[REPLAYED]).toBe('true');
    expect(repeat.body).toBe(first.body);
    expect(repeat.headers.etag).toBe(first.headers.etag);
    expect(await count('across')).toBe(1);
  });

  it('runs concurrent repeats spread over both instances once, answering all alike', async () => {
    const idempotencyKey = newKey();
    const body = { item: { text: 'both' } };
    const replies = await Promise.all(
      Array.from({ length: 20 }, (_, i) =>
        settled(i % 2 === 0 ? a : b, '/data/both', idempotencyKey, body),
      ),
    );
    const answers = new Set(replies.map(({ reply }) => `${reply.status} ${reply.body}`));
    expect(answers.size).toBe(1);
    expect(replies[0]!.status).toBe(200);
    expect(await count('both')).toBe(1);
  });
});
