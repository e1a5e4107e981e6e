import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import fc from 'fast-check';
import { createTestApp, uniqueDbName, type TestApp } from '../support/app';
import { createUser, type TestUser } from '../support/factories';
import { SseClient, type FeedEventData as Ev } from '../support/sse';

// The property runs take about 25–35 s on two quiet cores and two to three times that on a busy
// machine; the bound only ends a run that hangs.
jest.setTimeout(240_000);

/**
 * Live queries against a model: random items, filters over every operator, and creates, updates
 * and deletes from two writers through two instances (each on its own items). Every stream's
 * events must be what a model that judges each change by its before and after images says,
 * across a forced reconnect (Last-Event-ID, on the other instance).
 */
const ENV = { EVENTS_POLL_MS: '100', EVENTS_HEARTBEAT_MS: '300' };
let a: TestApp;
let b: TestApp;
let user: TestUser;
const ports = new Map<TestApp, number>();

beforeAll(async () => {
  const shared = { ...ENV, MONGODB_DB_NAME: uniqueDbName(__filename) };
  a = await createTestApp(__filename, shared);
  b = await createTestApp(__filename, shared);
  for (const t of [a, b]) {
    await t.app.listen(0, '127.0.0.1');
    ports.set(t, ((t.app.getHttpServer() as Server).address() as AddressInfo).port);
  }
  user = await createUser(a);
});
afterAll(async () => {
  await a?.close();
  await b?.close();
});

type Value = string | number;
type Item = Record<string, Value>;
const OPS = ['eq', 'ne', 'gt', 'gte', 'lt', 'lte', 'in', 'nin', 'exists', 'prefix'] as const;
interface Condition {
  field: 's' | 'n';
  op: (typeof OPS)[number];
  values: string[];
}

// Values of both types in both fields, so comparisons meet other types (type bracketing).
const valueArb = fc.constantFrom<Value>('a', 'ab', 'b', '1', 2, 0, 1, 3);
const operandArb = fc.constantFrom('a', 'ab', 'b', '1', '2', '0', '3', 'true');
const fieldsArb = fc.record({ s: valueArb, n: valueArb }, { requiredKeys: [] });
const conditionArb: fc.Arbitrary<Condition> = fc
  .record({
    field: fc.constantFrom<'s' | 'n'>('s', 'n'),
    op: fc.constantFrom(...OPS),
    values: fc.array(operandArb, { minLength: 1, maxLength: 3 }),
  })
  .map((c) => (c.op === 'exists' ? { ...c, values: [c.values[0] === 'a' ? 'false' : 'true'] } : c));
const filterArb = fc.array(conditionArb, { minLength: 1, maxLength: 2 });
/** One writer's step on one of its three items: a create when it is absent, else an update or a delete. */
interface Step {
  slot: number;
  del: boolean;
  fields: Partial<Item>;
}
const stepArb: fc.Arbitrary<Step> = fc.record({
  slot: fc.integer({ min: 0, max: 2 }),
  del: fc.boolean(),
  fields: fieldsArb,
});

/** The query string of a filter. */
function params(filter: Condition[]): string {
  return filter
    .map((c) => {
      const value = c.op === 'in' || c.op === 'nin' ? c.values.join(',') : (c.values[0] as string);
      return `filter[${c.field}][${c.op}]=${encodeURIComponent(value)}`;
    })
    .join('&');
}

/** What a query-string operand matches for equality: itself, and the number or boolean it spells. */
function spelled(raw: string): unknown[] {
  if (/^-?(0|[1-9]\d*)$/.test(raw)) return [raw, Number(raw)];
  if (raw === 'true' || raw === 'false') return [raw, raw === 'true'];
  return [raw];
}

/** The model's matching (written from the documented semantics, not from the service's code). */
function holds(item: Item, c: Condition): boolean {
  const present = Object.hasOwn(item, c.field);
  const value = item[c.field];
  const first = c.values[0] as string;
  const equal = (raws: string[]) => present && raws.flatMap(spelled).includes(value);
  switch (c.op) {
    case 'eq':
      return equal([first]);
    case 'ne':
      return !equal([first]);
    case 'in':
      return equal(c.values);
    case 'nin':
      return !equal(c.values);
    case 'exists':
      return present === (first === 'true');
    case 'prefix':
      return typeof value === 'string' && value.startsWith(first);
    case 'gt':
    case 'gte':
    case 'lt':
    case 'lte': {
      // A bound that spells a number compares with numbers, any other with strings.
      const bound: Value = /^-?(0|[1-9]\d*)$/.test(first) ? Number(first) : first;
      if (!present || typeof value !== typeof bound) return false;
      const [x, y] = [value, bound] as [Value, Value];
      return { gt: x > y, gte: x >= y, lt: x < y, lte: x <= y }[c.op];
    }
  }
}

/** What a stream with `filter` must send of the feed `feed`: judged by the before and after images. */
function expected(feed: Ev[], filter: Condition[]): string[] {
  const state = new Map<string, Item>();
  const out: string[] = [];
  const matches = (item: Item | undefined) => !!item && filter.every((c) => holds(item, c));
  for (const event of feed) {
    if (event.resource !== 'item') {
      out.push(`${event.id} ${event.type} ${event.key}`);
      continue;
    }
    const before = state.get(event.key);
    const after = event.data as Item | undefined;
    if (after) state.set(event.key, after);
    else state.delete(event.key);
    const [was, is] = [matches(before), matches(after)];
    const type =
      event.type === 'created'
        ? is && 'created'
        : event.type === 'deleted'
          ? was && 'deleted'
          : was && is
            ? 'updated'
            : is
              ? 'entered'
              : was && 'left';
    if (type) out.push(`${event.id} ${type} ${event.key}`);
  }
  return out;
}

/** The items the feed leaves, by id. */
function finalItems(feed: Ev[]): Map<string, Item> {
  const state = new Map<string, Item>();
  for (const event of feed)
    if (event.resource === 'item') {
      if (event.data) state.set(event.key, event.data as Item);
      else state.delete(event.key);
    }
  return state;
}

const seen = (client: SseClient): string[] =>
  client.events.map((e) => {
    const event = JSON.parse(e.data) as Ev;
    return `${event.id} ${event.type} ${event.key}`;
  });

let run = 0;

it('sends every stream what the model of before and after images says, across a reconnect', async () => {
  await fc.assert(
    fc.asyncProperty(
      fc.array(filterArb, { minLength: 4, maxLength: 4 }),
      fc.array(fc.array(stepArb, { minLength: 5, maxLength: 14 }), { minLength: 2, maxLength: 2 }),
      async (filters, writers) => {
        run += 1;
        const collection = `model${run}`;
        const key = { 'X-Api-Key': user.apiKey };
        const start = await a.http().get(`/data/${collection}`).set(key);
        const from = start.headers['feed-position'] as string;
        const url = (filter: Condition[]) =>
          `/events/stream?collection=${collection}&${params(filter)}`;
        const open = (t: TestApp, filter: Condition[], headers: Record<string, string>) =>
          SseClient.open(ports.get(t) as number, url(filter), { ...key, ...headers });
        let streams = await Promise.all(
          filters.map((filter, i) => open(i % 2 === 0 ? a : b, filter, { 'Last-Event-ID': from })),
        );
        const before: string[][] = filters.map(() => []);

        // Which of its items each writer holds, across both halves of its steps.
        const held = writers.map(() => [false, false, false]);
        const writer = async (w: number, steps: Step[]) => {
          const t = w === 0 ? a : b;
          const exists = held[w] as boolean[];
          for (const step of steps) {
            const id = `w${w}-${step.slot}`;
            const path = `/data/${collection}`;
            if (!exists[step.slot]) {
              await t
                .http()
                .post(path)
                .set(key)
                .send({ item: { _id: id, ...step.fields } })
                .expect(200);
              exists[step.slot] = true;
            } else if (step.del || Object.keys(step.fields).length === 0) {
              await t.http().delete(`${path}/_id/${id}`).set(key).expect(204);
              exists[step.slot] = false;
            } else {
              await t
                .http()
                .put(`${path}/_id/${id}`)
                .set(key)
                .send({ values: step.fields })
                .expect(200);
            }
          }
        };
        const half = (steps: Step[], part: 0 | 1) =>
          part === 0 ? steps.slice(0, steps.length >> 1) : steps.slice(steps.length >> 1);
        await Promise.all(writers.map((steps, w) => writer(w, half(steps, 0))));
        // Every stream is cut off mid-way and resumes on the other instance from its last event.
        streams = await Promise.all(
          streams.map(async (stream, i) => {
            stream.close();
            before[i] = seen(stream);
            const last = stream.events.at(-1)?.id ?? from;
            return open(i % 2 === 0 ? b : a, filters[i] as Condition[], { 'Last-Event-ID': last });
          }),
        );
        await Promise.all(writers.map((steps, w) => writer(w, half(steps, 1))));
        // The database's own answer to each filter, for the model to be held against it too.
        const listed = await Promise.all(
          filters.map(async (filter) => {
            const res = await a
              .http()
              .get(`/data/${collection}?${params(filter)}&limit=500`)
              .set(key);
            return res.status === 204 ? [] : (res.body as Item[]).map((item) => item._id).sort();
          }),
        );
        // The drop of the collection is the last event every stream of it receives.
        await a.http().delete(`/data/${collection}`).set(key).expect(204);

        const feed: Ev[] = [];
        for (let after = from; ;) {
          const page = await a
            .http()
            .get(`/events?after=${after}&collection=${collection}&limit=500`)
            .set(key)
            .expect(200);
          const body = page.body as { events: Ev[]; next: string };
          feed.push(...body.events);
          if (body.events.length < 500) break;
          after = body.next;
        }
        try {
          const items = [...finalItems(feed).entries()];
          for (const [i, filter] of filters.entries())
            expect(listed[i]).toEqual(
              items
                .filter(([, item]) => filter.every((c) => holds(item, c)))
                .map(([id]) => id)
                .sort(),
            );
          for (const [i, stream] of streams.entries()) {
            const want = expected(feed, filters[i] as Condition[]);
            const done = () => seen(stream).some((line) => line.endsWith(`deleted ${collection}`));
            while (!done()) await stream.waitFor(stream.events.length + 1, 5000);
            expect([...(before[i] as string[]), ...seen(stream)]).toEqual(want);
          }
        } finally {
          for (const stream of streams) stream.close();
        }
      },
    ),
    { seed: 20261126, numRuns: 12, endOnFailure: true },
  );
});
