import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Webhook } from 'standardwebhooks';
import { until } from '../support/until';
import { createTestApp, type TestApp } from '../support/app';
import { createSubKey, createUser, type TestUser } from '../support/factories';
import { expectInvalid, expectProblem } from '../support/problems';
import { digestOf } from '../../src/lifecycle/erasure.repository';
import { WebhooksService } from '../../src/webhooks/webhooks.service';

/**
 * Webhooks: signed deliveries checked with the Standard Webhooks verifier library, retries after
 * a 500, disabling after the retry window, and the refusal of private addresses.
 */
interface Received {
  headers: IncomingHttpHeaders;
  body: string;
}

/** A small endpoint: answers with the next status of `answers` (then 200) and keeps what came. */
class Receiver {
  readonly received: Received[] = [];
  answers: number[] = [];
  private server: Server | undefined;
  port = 0;

  async start(): Promise<void> {
    this.server = createServer((req, res) => {
      let body = '';
      req.setEncoding('utf8');
      req.on('data', (chunk: string) => (body += chunk));
      req.on('end', () => {
        this.received.push({ headers: req.headers, body });
        res.statusCode = this.answers.shift() ?? 200;
        res.end();
      });
    });
    await new Promise<void>((resolve) => this.server!.listen(0, '127.0.0.1', resolve));
    this.port = (this.server.address() as AddressInfo).port;
  }

  async waitFor(count: number, timeoutMs = 5000): Promise<Received[]> {
    const deadline = Date.now() + timeoutMs;
    while (this.received.length < count) {
      if (Date.now() > deadline)
        throw new Error(`expected ${count} deliveries, got ${this.received.length}`);
      await new Promise((r) => setTimeout(r, 25));
    }
    return this.received;
  }

  stop(): Promise<void> {
    return new Promise((resolve) => (this.server ? this.server.close(() => resolve()) : resolve()));
  }
}

let t: TestApp;
let guarded: TestApp;
let user: TestUser;
const receiver = new Receiver();

beforeAll(async () => {
  await receiver.start();
  const env = {
    EVENTS_POLL_MS: '50',
    WEBHOOK_RETRY_BASE_MS: '100',
    WEBHOOK_RETRY_WINDOW_MS: '1500',
    WEBHOOK_MAX: '3',
  };
  t = await createTestApp(__filename, { ...env, WEBHOOK_ALLOW_PRIVATE: 'true' });
  // A second app on the same database with the default: private addresses refused.
  guarded = await createTestApp(__filename, { ...env, MONGODB_DB_NAME: t.config.database.dbName });
  user = await createUser(t);
});
afterAll(async () => {
  await t?.close();
  await guarded?.close();
  await receiver.stop();
});

const hook = (key: string, body: object) =>
  t.http().post('/webhooks').set('X-Api-Key', key).send(body);

interface DeliveryBody {
  id: string;
  status: string;
  attempts: { status: number }[];
}

/**
 * A webhook's deliveries once `count` of them are recorded and none is pending: the service
 * records an attempt after the endpoint answered it, so the receiver having a request says
 * nothing yet about the record.
 */
async function settledDeliveries(key: string, id: string, count: number) {
  const deadline = Date.now() + 10_000;
  for (;;) {
    const res = await t.http().get(`/webhooks/${id}/deliveries`).set('X-Api-Key', key).expect(200);
    const deliveries = res.body as DeliveryBody[];
    if (deliveries.length >= count && deliveries.every((d) => d.status !== 'pending'))
      return deliveries;
    if (Date.now() > deadline)
      throw new Error(`deliveries still pending: ${JSON.stringify(deliveries)}`);
    await new Promise((r) => setTimeout(r, 25));
  }
}

describe('deliveries', () => {
  it('POSTs each event signed by the Standard Webhooks scheme, and records the delivery', async () => {
    receiver.received.length = 0;
    const created = await hook(user.apiKey, {
      url: `http://127.0.0.1:${receiver.port}/hook`,
      events: ['created'],
      collection: 'orders',
    }).expect(200);
    const { secret, webhook } = created.body as { secret: string; webhook: { id: string } };
    expect(secret).toMatch(/^whsec_/);

    await t
      .http()
      .post('/data/orders')
      .set('X-Api-Key', user.apiKey)
      .send({ item: { _id: 'w1', total: 5 } })
      .expect(200);
    await t.http().post('/data/other').set('X-Api-Key', user.apiKey).send({ item: {} }).expect(200);
    // A later event of `orders`: once it is delivered, the fan-out has read past those of `other`.
    await t
      .http()
      .post('/data/orders')
      .set('X-Api-Key', user.apiKey)
      .send({ item: { _id: 'w2', total: 7 } })
      .expect(200);
    await receiver.waitFor(3);
    // The items' events, and the collection's own (`created` too); nothing of `other`.
    const delivery = receiver.received.find((r) => r.body.includes('"key":"w1"'));
    // The published verifier accepts the signature (it throws otherwise), and reads the event.
    const event = new Webhook(secret).verify(delivery!.body, {
      'webhook-id': String(delivery!.headers['webhook-id']),
      'webhook-timestamp': String(delivery!.headers['webhook-timestamp']),
      'webhook-signature': String(delivery!.headers['webhook-signature']),
    }) as { type: string; key: string; data: { total: number } };
    expect(event).toMatchObject({ type: 'created', key: 'w1', data: { total: 5 } });
    expect(() =>
      new Webhook(secret).verify(`${delivery!.body} `, {
        'webhook-id': String(delivery!.headers['webhook-id']),
        'webhook-timestamp': String(delivery!.headers['webhook-timestamp']),
        'webhook-signature': String(delivery!.headers['webhook-signature']),
      }),
    ).toThrow();
    const deliveries = await settledDeliveries(user.apiKey, webhook.id, 3);
    expect(
      receiver.received.map((r) => (JSON.parse(r.body) as { resource: string }).resource).sort(),
    ).toEqual(['collection', 'item', 'item']);
    expect(deliveries).toHaveLength(3);
    const itemDelivery = deliveries.find((d) => d.id === delivery!.headers['webhook-id']);
    expect(itemDelivery).toMatchObject({ status: 'delivered', attempts: [{ status: 200 }] });
    await t.http().delete(`/webhooks/${webhook.id}`).set('X-Api-Key', user.apiKey).expect(204);
  });

  it('retries after a 500 with backoff until the endpoint accepts', async () => {
    receiver.received.length = 0;
    receiver.answers = [500, 503];
    const { body } = await hook(user.apiKey, {
      url: `http://127.0.0.1:${receiver.port}/retry`,
      events: ['updated'],
    }).expect(200);
    await t
      .http()
      .post('/data/retry')
      .set('X-Api-Key', user.apiKey)
      .send({ item: { _id: 'r1' } });
    await t
      .http()
      .put('/data/retry/_id/r1')
      .set('X-Api-Key', user.apiKey)
      .send({ values: { n: 1 } })
      .expect(200);
    const received = await receiver.waitFor(3);
    // The same message each time: one webhook-id, three attempts.
    expect(new Set(received.map((r) => r.headers['webhook-id'])).size).toBe(1);
    const deliveries = await settledDeliveries(user.apiKey, body.webhook.id, 1);
    expect(deliveries[0]?.status).toBe('delivered');
    expect(deliveries[0]?.attempts.map((a) => a.status)).toEqual([500, 503, 200]);
    const webhooks = await t.http().get('/webhooks').set('X-Api-Key', user.apiKey).expect(200);
    expect(
      webhooks.body.find((w: { id: string }) => w.id === body.webhook.id).failingSince,
    ).toBeNull();
    await t.http().delete(`/webhooks/${body.webhook.id}`).set('X-Api-Key', user.apiKey).expect(204);
  });

  it('gives up after the retry window and disables an endpoint that never succeeds', async () => {
    const owner = await createUser(t);
    receiver.answers = Array.from({ length: 100 }, () => 500);
    try {
      const { body } = await hook(owner.apiKey, {
        url: `http://127.0.0.1:${receiver.port}/down`,
        events: ['created'],
      }).expect(200);
      await t
        .http()
        .post('/data/down')
        .set('X-Api-Key', owner.apiKey)
        .send({ item: {} })
        .expect(200);
      // The retry window is 1.5 s; how long the rounds take is the machine's, not the test's.
      let state: { disabledAt: string | null } = { disabledAt: null };
      await until('the endpoint is disabled', async () => {
        const list = await t.http().get('/webhooks').set('X-Api-Key', owner.apiKey).expect(200);
        state = list.body[0];
        return state.disabledAt !== null;
      });
      expect(state.disabledAt).not.toBeNull();
      // Nothing is attempted any more: what was pending ends as failed.
      let deliveries: { status: string; attempts: unknown[] }[] = [];
      await until('no delivery is pending', async () => {
        deliveries = (
          await t
            .http()
            .get(`/webhooks/${body.webhook.id}/deliveries`)
            .set('X-Api-Key', owner.apiKey)
            .expect(200)
        ).body as { status: string; attempts: unknown[] }[];
        return deliveries.every((d) => d.status !== 'pending');
      });
      expect(deliveries.map((d) => d.status)).toEqual(['failed', 'failed']);
      expect(Math.max(...deliveries.map((d) => d.attempts.length))).toBeGreaterThan(1);
    } finally {
      // The next tests' deliveries are answered 200 whatever happened here.
      receiver.answers = [];
    }
  });
});

describe('an owner that lost its rights', () => {
  it('gets no delivery of what was written after, once an erasure of it is under way', async () => {
    const owner = await createUser(t);
    receiver.received.length = 0;
    const created = await hook(owner.apiKey, {
      url: `http://127.0.0.1:${receiver.port}/lost`,
      events: ['created'],
      collection: 'lost',
    }).expect(200);
    const { webhook } = created.body as { webhook: { id: string } };
    const write = (id: string) =>
      t
        .http()
        .post('/data/lost')
        .set('X-Api-Key', owner.apiKey)
        .send({ item: { _id: id } })
        .expect(200);
    await write('kept');
    // The collection's creation and the item's: both delivered before the loss.
    await settledDeliveries(owner.apiKey, webhook.id, 2);
    // An erasure of the owner under way on another instance, as ErasureService records it before
    // revoking the keys (its lease far off, so no instance takes it over during the test). The
    // keys still work here, so a write can come after the loss.
    const tenant = { kind: 'user' as const, id: owner.subject };
    const erasure = await t.connection.collection('erasures').insertOne({
      kind: 'user',
      target: owner.subject,
      targetDigest: digestOf(tenant),
      activeKey: digestOf(tenant),
      status: 'running',
      stepsDone: [],
      collectionsDropped: 0,
      leaseUntil: new Date(Date.now() + 3_600_000),
      runs: 1,
      requestedAt: new Date(),
    });
    try {
      await write('after');
      // Two whole rounds of fan-out and sending after the write (a call joins a running round).
      const webhooks = t.app.get(WebhooksService);
      await webhooks.runNow();
      await webhooks.runNow();
      const res = await t
        .http()
        .get(`/webhooks/${webhook.id}/deliveries`)
        .set('X-Api-Key', owner.apiKey)
        .expect(200);
      expect((res.body as DeliveryBody[]).length).toBe(2);
      expect(receiver.received.filter((r) => r.body.includes('"key":"after"'))).toEqual([]);
      expect(receiver.received.filter((r) => r.body.includes('"key":"kept"'))).toHaveLength(1);
    } finally {
      await t.connection.collection('erasures').deleteOne({ _id: erasure.insertedId });
    }
  });
});

describe('refusals', () => {
  it('refuses loopback, private and link-local endpoints unless WEBHOOK_ALLOW_PRIVATE', async () => {
    for (const url of [
      `http://127.0.0.1:${receiver.port}/`,
      'http://localhost/',
      'http://10.1.2.3/',
      'http://192.168.0.10/',
      'http://169.254.169.254/latest/meta-data',
      'http://[::1]/',
      'http://[fd00::1]/',
      'http://[::ffff:127.0.0.1]/',
    ]) {
      const res = await guarded
        .http()
        .post('/webhooks')
        .set('X-Api-Key', user.apiKey)
        .send({ url, events: ['created'] });
      expectInvalid(res, 'url');
    }
  });

  it('refuses bad bodies, sub keys, unknown webhooks and more than WEBHOOK_MAX', async () => {
    for (const body of [
      { url: 'ftp://example.com/', events: ['created'] },
      { url: 'http://user:pw@127.0.0.1/', events: ['created'] },
      { url: `http://127.0.0.1:${receiver.port}/`, events: [] },
      { url: `http://127.0.0.1:${receiver.port}/`, events: ['moved'] },
      { url: `http://127.0.0.1:${receiver.port}/`, events: ['created'], secret: 'plain' },
      { url: `http://127.0.0.1:${receiver.port}/`, events: ['created'], collection: null },
    ])
      expectProblem(await hook(user.apiKey, body), 400, 'VALIDATION_FAILED');
    const sub = await createSubKey(t, user);
    expectProblem(
      await hook(sub.apiKey, { url: `http://127.0.0.1:${receiver.port}/`, events: ['created'] }),
      403,
      'FORBIDDEN',
    );
    expectProblem(
      await t.http().delete('/webhooks/0123456789abcdef01234567').set('X-Api-Key', user.apiKey),
      404,
      'WEBHOOK_NOT_FOUND',
    );
    const other = await createUser(t);
    const mine = await hook(user.apiKey, {
      url: `http://127.0.0.1:${receiver.port}/mine`,
      events: ['created'],
    }).expect(200);
    expectProblem(
      await t
        .http()
        .get(`/webhooks/${mine.body.webhook.id}/deliveries`)
        .set('X-Api-Key', other.apiKey),
      404,
      'WEBHOOK_NOT_FOUND',
    );
    const full = await createUser(t);
    for (let i = 0; i < 3; i += 1)
      await hook(full.apiKey, {
        url: `http://127.0.0.1:${receiver.port}/${i}`,
        events: ['created'],
      }).expect(200);
    expectProblem(
      await hook(full.apiKey, { url: `http://127.0.0.1:${receiver.port}/4`, events: ['created'] }),
      409,
      'WEBHOOK_QUOTA_EXCEEDED',
    );
  });
});
