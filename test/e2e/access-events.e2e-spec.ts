import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createTestApp, type TestApp } from '../support/app';
import { createSubKey, createUser, type TestSubProfile, type TestUser } from '../support/factories';
import { expectProblem } from '../support/problems';
import { SseClient, type FeedEventData as Ev } from '../support/sse';
import { until } from '../support/until';
import type { AccessRulesDocument } from '../../src/data/access/access-rules';

/**
 * The change feed judged by access rules (docs/events.md, "Who sees what"): a sub key's pages,
 * long polls, streams and live queries show the item events its collection's read rule lets it
 * read, never a protected field, and refuse a live query naming one.
 */
const ENV = { EVENTS_POLL_MS: '100', EVENTS_HEARTBEAT_MS: '300' };
let t: TestApp;
let port: number;
let user: TestUser;
/** The sub key that reads; `bob` owns the items it is shown. */
let ada: TestSubProfile;
let bob: TestSubProfile;
let serial = 0;

beforeAll(async () => {
  t = await createTestApp(__filename, ENV);
  await t.app.listen(0, '127.0.0.1');
  port = ((t.app.getHttpServer() as Server).address() as AddressInfo).port;
  user = await createUser(t);
  ada = await createSubKey(t, user);
  bob = await createSubKey(t, user);
});
afterAll(async () => {
  await t?.close();
});

const RULES: AccessRulesDocument = {
  sub: { read: 'own', create: 'own', update: 'own', delete: 'own' },
  public: { read: 'none' },
  protectedFields: { sub: [], public: [] },
};

/**
 * Sets the collection's access rules on its registry entry (what PUT /data/{c}/access does);
 * this instance sees them at once.
 */
async function setAccessRules(
  collection: string,
  rules: Partial<AccessRulesDocument>,
): Promise<void> {
  await t
    .http()
    .put(`/data/${collection}/access`)
    .set('X-Api-Key', user.apiKey)
    .send({ ...RULES, ...rules })
    .expect(200);
}

/** A collection of its own, created by a root write, with these rules. */
async function collectionWith(rules: Partial<AccessRulesDocument>): Promise<string> {
  serial += 1;
  const name = `access-${serial}`;
  await write('post', `/data/${name}`, { item: { _id: 'seed', userId: bob.accountId } });
  await setAccessRules(name, rules);
  return name;
}

async function write(method: 'post' | 'put' | 'delete', path: string, body?: object) {
  const req = t.http()[method](path).set('X-Api-Key', user.apiKey);
  await (body === undefined ? req : req.send(body)).expect(method === 'delete' ? 204 : 200);
}

/** The newest event of the namespace (a list's Feed-Position). */
async function position(collection: string): Promise<string> {
  const res = await t.http().get(`/data/${collection}`).set('X-Api-Key', user.apiKey);
  return res.headers['feed-position'] as string;
}

/** `type key` of each item event, with the data's keys when it has data. */
const summary = (events: Ev[]): string[] =>
  events
    .filter((e) => e.resource === 'item')
    .map((e) => {
      const data = (e as { data?: Record<string, unknown> }).data;
      return `${e.type} ${e.key}${data ? ` {${Object.keys(data).sort().join(',')}}` : ''}`;
    });

/** Every page of `query` after `after`, `limit` events read per page; checks the cursors. */
async function pages(key: string, query: string, after: string, limit: number): Promise<Ev[]> {
  const seen: Ev[] = [];
  let cursor = Number(after);
  for (;;) {
    const res = await t
      .http()
      .get(`/events?${query}&after=${cursor}&limit=${limit}`)
      .set('X-Api-Key', key)
      .expect(200);
    const page = res.body as { events: Ev[]; next: string };
    expect(page.events.length).toBeLessThanOrEqual(limit);
    const next = Number(page.next);
    if (next === cursor) return seen;
    expect(next).toBeGreaterThan(cursor);
    for (const event of page.events) {
      expect(Number(event.id)).toBeGreaterThan(cursor);
      expect(Number(event.id)).toBeLessThanOrEqual(next);
    }
    seen.push(...page.events);
    cursor = next;
  }
}

describe('a page of the feed', () => {
  it("shows a shared-read collection's items of every owner, without protected fields", async () => {
    const c = await collectionWith({
      sub: { ...RULES.sub, read: 'all' },
      protectedFields: { sub: ['cost'], public: [] },
    });
    const after = await position(c);
    await write('post', `/data/${c}`, { item: { _id: 'a1', userId: ada.accountId, cost: 5 } });
    await write('post', `/data/${c}`, { item: { _id: 'b1', userId: bob.accountId, cost: 7 } });
    await write('put', `/data/${c}/_id/b1`, { values: { cost: 8, name: 'B' } });
    const expected = [
      'created a1 {_createdAt,_id,_updatedAt,userId}',
      'created b1 {_createdAt,_id,_updatedAt,userId}',
      'updated b1 {_createdAt,_id,_updatedAt,name,userId}',
    ];
    expect(summary(await pages(ada.apiKey, `collection=${c}`, after, 100))).toEqual(expected);
    // Without `collection`: the collection is found among the namespace's wider rules.
    expect(summary(await pages(ada.apiKey, 'resource=item', after, 100))).toEqual(expected);
    // Root keys are not limited: they see the protected field.
    const root = await pages(user.apiKey, `collection=${c}`, after, 100);
    expect(root.map((e) => (e as { data?: { cost?: number } }).data?.cost)).toEqual([5, 7, 8]);
  });

  it('shows what a filter rule reads, and advances past what it skips', async () => {
    const c = await collectionWith({
      sub: { ...RULES.sub, read: { filter: { status: 'published' } } },
    });
    const after = await position(c);
    const item = (id: string, status: string) => ({
      item: { _id: id, userId: bob.accountId, status },
    });
    await write('post', `/data/${c}`, item('p1', 'published'));
    await write('post', `/data/${c}`, item('d1', 'draft'));
    await write('put', `/data/${c}/_id/d1`, { values: { title: 'x' } });
    await write('put', `/data/${c}/_id/p1`, { values: { status: 'draft' } });
    await write('post', `/data/${c}`, item('p2', 'published'));
    await write('delete', `/data/${c}/_id/p2`);
    await write('delete', `/data/${c}/_id/d1`);
    const expected = [
      'created p1 {_createdAt,_id,_updatedAt,status,userId}',
      // It left the rule: shown, without the item it is now.
      'updated p1',
      'created p2 {_createdAt,_id,_updatedAt,status,userId}',
      'deleted p2',
    ];
    // Two events read per page: pages with nothing to show still move the cursor on.
    expect(summary(await pages(ada.apiKey, `collection=${c}`, after, 2))).toEqual(expected);
    expect(summary(await pages(ada.apiKey, `collection=${c}`, after, 100))).toEqual(expected);
    // The owner of the items sees them by the same rule, not by ownership.
    expect(summary(await pages(bob.apiKey, `collection=${c}`, after, 100))).toEqual(expected);

    // A long poll passes over the events it may not read and answers the next it may.
    const from = await position(c);
    const answer = t
      .http()
      .get(`/events?collection=${c}&after=${from}&wait=20`)
      .set('X-Api-Key', ada.apiKey)
      .then((res) => res.body as { events: Ev[] });
    await write('post', `/data/${c}`, item('d2', 'draft'));
    await write('post', `/data/${c}`, item('p3', 'published'));
    expect(summary((await answer).events)).toEqual([
      'created p3 {_createdAt,_id,_updatedAt,status,userId}',
    ]);
  });
});

describe('a stream', () => {
  const open = (key: string, query: string) =>
    SseClient.open(port, `/events/stream?${query}`, { 'X-Api-Key': key });
  const items = (client: SseClient): Ev[] =>
    client.events.map((e) => JSON.parse(e.data) as Ev).filter((e) => e.resource === 'item');

  it('sends what the read rule reads, without protected fields', async () => {
    const c = await collectionWith({
      sub: { ...RULES.sub, read: { filter: { status: 'published' } } },
      protectedFields: { sub: ['cost'], public: [] },
    });
    const stream = await open(ada.apiKey, `collection=${c}&resource=item`);
    try {
      await write('post', `/data/${c}`, {
        item: { _id: 'd3', userId: bob.accountId, status: 'draft', cost: 1 },
      });
      await write('post', `/data/${c}`, {
        item: { _id: 'p4', userId: bob.accountId, status: 'published', cost: 2 },
      });
      await stream.waitFor(1);
      expect(summary(items(stream))).toEqual([
        'created p4 {_createdAt,_id,_updatedAt,status,userId}',
      ]);
    } finally {
      stream.close();
    }
  });

  it('a live query refuses protected fields in its filter and fields', async () => {
    const c = await collectionWith({
      protectedFields: { sub: ['cost', 'meta.secret'], public: [] },
    });
    for (const query of [
      `filter[cost]=5`,
      `filter[cost][gt]=5`,
      `fields=_id,cost`,
      `filter[meta]=x`,
      `fields=meta.secret.inner`,
    ])
      for (const path of ['/events', '/events/stream'])
        expectProblem(
          await t.http().get(`${path}?collection=${c}&${query}`).set('X-Api-Key', ada.apiKey),
          400,
          'PROTECTED_FIELD',
        );
    // Root keys are not limited by them.
    await t
      .http()
      .get(`/events?collection=${c}&filter[cost]=5`)
      .set('X-Api-Key', user.apiKey)
      .expect(200);
  });

  it('a live query sends `left` for items that leave the read rule, tightened or changed', async () => {
    const c = await collectionWith({
      sub: { ...RULES.sub, read: { filter: { status: 'published' } } },
      protectedFields: { sub: ['cost'], public: [] },
    });
    const stream = await open(ada.apiKey, `collection=${c}&filter[kind]=book`);
    try {
      const item = (id: string) => ({
        item: { _id: id, userId: bob.accountId, status: 'published', kind: 'book', cost: 3 },
      });
      await write('post', `/data/${c}`, item('p5'));
      await write('put', `/data/${c}/_id/p5`, { values: { status: 'draft' } });
      await write('post', `/data/${c}`, item('p6'));
      await stream.waitFor(3);
      // The rule is tightened: p6 is outside it now; its next change takes it away.
      await setAccessRules(c, {
        sub: { ...RULES.sub, read: { filter: { status: 'published', featured: true } } },
        protectedFields: { sub: ['cost'], public: [] },
      });
      await write('put', `/data/${c}/_id/p6`, { values: { cost: 4 } });
      await write('post', `/data/${c}`, { item: { ...item('p7').item, featured: true } });
      await until('the stream has its five item events', () => items(stream).length >= 5, 10_000);
      expect(summary(items(stream))).toEqual([
        'created p5 {_createdAt,_id,_updatedAt,kind,status,userId}',
        'left p5',
        'created p6 {_createdAt,_id,_updatedAt,kind,status,userId}',
        'left p6',
        'created p7 {_createdAt,_id,_updatedAt,featured,kind,status,userId}',
      ]);
    } finally {
      stream.close();
    }
  });
});
