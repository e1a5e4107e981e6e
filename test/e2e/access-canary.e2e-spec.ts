import { randomBytes } from 'node:crypto';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Response } from 'supertest';
import { createTestApp, type TestApp } from '../support/app';
import { createSubKey, createUser, type TestSubProfile, type TestUser } from '../support/factories';
import { SseClient } from '../support/sse';

/**
 * The canary: values placed only in protected fields never reach a sub or publishable caller —
 * not in any byte of any response body or header, event page, long poll, stream, live query,
 * or export line they receive — and every request that names a protected field
 * where its value could be learned (a filter, sort, projection, cursor, aggregate field, index
 * route, live filter, write filter) answers 400 PROTECTED_FIELD.
 */
const CANARY = `canary-${randomBytes(8).toString('hex')}`;
const DEEP_CANARY = `deep-${randomBytes(8).toString('hex')}`;
const ORIGIN = 'https://shop.example';
const RULES = {
  sub: { read: 'all', create: 'own', update: 'own', delete: 'own' },
  public: { read: 'all' },
  protectedFields: { sub: ['secret', 'deep.cost'], public: ['secret', 'deep.cost'] },
};

let t: TestApp;
let user: TestUser;
let sub: TestSubProfile;
let publishable: string;
let port = 0;
const HOOK_URL = 'http://127.0.0.1:9/hook';
/** Everything the sub and publishable callers received, as text. */
const received: string[] = [];

function keep(res: Response): Response {
  received.push(JSON.stringify(res.headers), res.text ?? '', JSON.stringify(res.body ?? null));
  return res;
}

const asSub = () => ({ 'X-Api-Key': sub.apiKey });
const asPublic = () => ({ 'X-Api-Key': publishable, Origin: ORIGIN });

async function get(path: string, headers: Record<string, string>): Promise<Response> {
  return keep(await t.http().get(path).set(headers));
}

beforeAll(async () => {
  t = await createTestApp(__filename, { EVENTS_POLL_MS: '50' });
  await t.app.listen(0, '127.0.0.1');
  port = ((t.app.getHttpServer() as Server).address() as AddressInfo).port;
  user = await createUser(t);
  sub = await createSubKey(t, user, { clientId: 'app', accountId: 'acct-canary' });
  await t.http().put('/data/cat/access').set('X-Api-Key', user.apiKey).send(RULES).expect(200);
  await t
    .http()
    .put('/data/private/access')
    .set('X-Api-Key', user.apiKey)
    .send({ sub: { read: 'own' }, public: { read: 'none' } })
    .expect(200);
  const minted = await t
    .http()
    .post('/api-keys')
    .set('X-Api-Key', user.apiKey)
    .send({ kind: 'publishable', collections: ['cat'], allowedOrigins: [ORIGIN] })
    .expect(200);
  publishable = (minted.body as { apiKey: string }).apiKey;
  // The root's items, and one the sub key owns; every one holds the canaries.
  for (const [name, owner] of [
    ['first', undefined],
    ['second', undefined],
    ['mine', 'acct-canary'],
  ] as const)
    await t
      .http()
      .post('/data/cat')
      .set('X-Api-Key', user.apiKey)
      .send({
        item: {
          _id: name,
          name,
          tag: 'x',
          secret: CANARY,
          deep: { cost: DEEP_CANARY, shown: 1 },
          ...(owner ? { userId: owner } : {}),
        },
      })
      .expect(200);
  await t
    .http()
    .post('/data/private')
    .set('X-Api-Key', user.apiKey)
    .send({ item: { _id: 'taken', name: 'taken', secret: CANARY } })
    .expect(200);
});

afterAll(async () => {
  await t?.close();
});

describe('the canary', () => {
  it('is in no byte of any read, export, feed, stream or write answer a sub or publishable caller gets', async () => {
    // Webhooks are registered by root and team keys only (their deliveries are the whole event):
    // a sub key gets none to read.
    expect((await t.http().post('/webhooks').set(asSub()).send({ url: HOOK_URL })).status).toBe(
      403,
    );
    const streams = await Promise.all([
      SseClient.open(port, '/events/stream?collection=cat', asSub()),
      SseClient.open(port, '/events/stream?collection=cat&filter[tag]=x', asSub()),
      SseClient.open(port, '/events/stream?collection=cat', asPublic()),
    ]);
    // The file's database is its own: its feed starts with this file.
    const after = '0';

    for (const headers of [asSub(), asPublic()]) {
      expect((await get('/data/cat/_id/first', headers)).status).toBe(200);
      expect((await get('/data/cat?limit=10', headers)).status).toBe(200);
      expect((await get('/data/cat?limit=10&fields=name,deep.shown', headers)).status).toBe(200);
      expect((await get('/data/cat?limit=1&sort=name', headers)).status).toBe(200);
      expect((await get('/data/cat/count', headers)).status).toBe(200);
      expect((await get('/data/cat/aggregate?groupBy=tag', headers)).status).toBe(200);
      expect((await get('/data/cat/explain?tag=x', headers)).status).toBeLessThan(500);
    }
    const exported = await get('/export?collections=cat', asSub());
    expect(exported.status).toBe(200);
    expect(exported.text).toContain('"first"');

    // The sub key's writes: their answers carry the item, their events go to every reader.
    const updated = keep(
      await t
        .http()
        .put('/data/cat/_id/mine')
        .set(asSub())
        .send({ values: { tag: 'x' } }),
    );
    expect(updated.status).toBe(200);
    await t
      .http()
      .put('/data/cat/_id/first')
      .set('X-Api-Key', user.apiKey)
      .send({ values: { tag: 'x', note: 'root write' } })
      .expect(200);
    await t.http().delete('/data/cat/_id/second').set('X-Api-Key', user.apiKey).expect(204);
    // A create that meets an item the sub key cannot read: 409, naming nothing of it.
    const conflict = keep(
      await t
        .http()
        .post('/data/private')
        .set(asSub())
        .send({ item: { _id: 'taken', name: 'taken' } }),
    );
    expect(conflict.status).toBe(409);
    expect(conflict.body).not.toHaveProperty('existingId');

    const page = await get(`/events?after=${after}&collection=cat&limit=100`, asSub());
    expect(page.status).toBe(200);
    expect((page.body as { events: unknown[] }).events.length).toBeGreaterThanOrEqual(3);
    expect((await get(`/events?after=${after}&collection=cat&wait=1`, asSub())).status).toBe(200);
    for (const stream of streams) {
      await stream.waitFor(2);
      stream.close();
      received.push(JSON.stringify(stream.events));
    }

    const everything = received.join('\n');
    expect(everything.length).toBeGreaterThan(1000);
    expect(everything).toContain('deep');
    expect(everything).not.toContain(CANARY);
    expect(everything).not.toContain(DEEP_CANARY);
  });

  it('answers 400 PROTECTED_FIELD to every request that names a protected field where its value could be learned', async () => {
    const oracles = [
      '/data/cat?secret=x',
      '/data/cat?secret[prefix]=canary',
      '/data/cat?existsFilter[secret]=true',
      '/data/cat?deep.cost=x',
      '/data/cat?sort=secret',
      '/data/cat?sort=deep.cost',
      '/data/cat?fields=secret',
      '/data/cat?fields=deep.cost',
      '/data/cat?sort=secret&after[secret]=x&after[_id]=a',
      '/data/cat?sort=-deep.cost&before[deep.cost]=x&before[_id]=a',
      '/data/cat/count?secret=x',
      '/data/cat/aggregate?groupBy=secret',
      '/data/cat/aggregate?groupBy=tag&op=max&field=deep.cost',
      '/data/cat/explain?secret=x',
      `/data/cat/secret/${CANARY}`,
      '/events?collection=cat&filter[secret]=x',
    ];
    for (const headers of [asSub(), asPublic()])
      for (const path of oracles) {
        const res = await t.http().get(path).set(headers);
        expect({ path, status: res.status, code: (res.body as { code?: string }).code }).toEqual({
          path,
          status: 400,
          code: 'PROTECTED_FIELD',
        });
      }
    // Writes by filter select by the field as much as a list does.
    for (const [method, path, body] of [
      ['put', '/data/cat', { filter: { secret: CANARY }, values: { tag: 'y' } }],
      ['put', '/data/cat', { filter: { secret: CANARY }, values: { tag: 'y' }, multi: true }],
      ['delete', '/data/cat', { filter: { 'deep.cost': DEEP_CANARY } }],
      ['delete', '/data/cat', { filter: { secret: CANARY }, multi: true }],
      ['put', `/data/cat/secret/${CANARY}`, { values: { tag: 'y' } }],
      ['delete', `/data/cat/secret/${CANARY}`, {}],
      ['patch', `/data/cat/deep.cost/${DEEP_CANARY}`, { push: { field: 'tags', value: 1 } }],
    ] as const) {
      const res = await t.http()[method](path).set(asSub()).send(body);
      expect({
        method,
        path,
        status: res.status,
        code: (res.body as { code?: string }).code,
      }).toEqual({
        method,
        path,
        status: 400,
        code: 'PROTECTED_FIELD',
      });
    }
    // A write that sets one is refused, whatever the rules allow.
    const write = await t
      .http()
      .put('/data/cat/_id/mine')
      .set(asSub())
      .send({ values: { secret: 'guess' } });
    expect({ status: write.status, code: (write.body as { code?: string }).code }).toEqual({
      status: 403,
      code: 'ACCESS_RULE',
    });
  });
});
