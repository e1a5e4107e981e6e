// Live queries: N streams on one namespace, each with an item filter of its own, while M changes
// (creates, updates, deletes) go through the service; next to N unfiltered streams and to the
// same changes with no stream at all. Events per second, CPU per change, and the database reads
// per change the streams add (the feed is read once per change, whatever the streams).
import { join } from 'node:path';
import { BSON, type Db } from 'mongodb';
import { call } from './api';
import { SERVICE_DIST } from './paths';
import { cpuSecondsOf } from './processes';
import type { Target } from './servers';
import { openStreams } from './sse-streams';

export interface LiveLeg {
  label: string;
  streams: number;
  changes: number;
  /** Events delivered over all streams (the collection's drop, which ends each, left out). */
  delivered: number;
  seconds: number;
  deliveredPerSecond: number;
  cpuMsPerChange: number;
  /** Database commands per change, all of the service's (the writes' own included). */
  commandsPerChange: number;
  incomplete: number;
}

export interface LiveQueryResult {
  legs: LiveLeg[];
  /**
   * Feed reads per change the streams added: the leg's commands less the leg without streams
   * (the writes are the same in every leg; what the streams add is reading the feed).
   */
  feedReadsPerChange: { unfiltered: number; live: number };
  /** What an update's and a deletion's event store for live queries (`prior`), on average. */
  priorBytes: { updated: number; deleted: number };
  /** CPU of computing an update's prior (the diff of the item before and after), per write. */
  priorMicros: number;
}

const round = (n: number, digits = 2): number => Math.round(n * 10 ** digits) / 10 ** digits;

/** The database commands the service has sent (`mongodb_commands_total`). */
export async function commands(metricsUrl: string | undefined): Promise<number> {
  if (!metricsUrl) return 0;
  const text = await (await fetch(metricsUrl)).text();
  return Number(/^mongodb_commands_total ([0-9.eE+-]+)$/m.exec(text)?.[1] ?? 0);
}

/** The item of change `i`: values of a few sizes, `n` spread over 0–99 for the filters. */
const itemValues = (i: number) => ({ n: (i * 37) % 100, status: i % 3 === 0 ? 'open' : 'done' });

/** 1 create in 4 changes, then updates of what was created, and a delete for every fourth. */
async function changes(service: Target, key: string, collection: string, count: number) {
  const ids: string[] = [];
  for (let i = 0; i < count; i += 1) {
    const path = `/data/${collection}`;
    if (i % 4 === 0 || ids.length === 0) {
      const id = `i${i}`;
      await call(service.url, 'POST', path, { key, body: { item: { _id: id, ...itemValues(i) } } });
      ids.push(id);
    } else if (i % 4 === 3) {
      await call(service.url, 'DELETE', `${path}/_id/${ids.shift() as string}`, { key });
    } else {
      const id = ids[i % ids.length] as string;
      await call(service.url, 'PUT', `${path}/_id/${id}`, {
        key,
        body: { values: itemValues(i + 1) },
      });
    }
  }
  // The last event of every stream of the collection.
  await call(service.url, 'DELETE', `/data/${collection}`, { key });
}

async function leg(
  service: Target,
  key: string,
  label: string,
  options: { streams: number; changes: number; timeoutMs: number; filtered: boolean },
): Promise<LiveLeg> {
  const collection = `live${label}${Date.now()}`;
  const ended = new Array<boolean>(options.streams).fill(false);
  const query = (i: number): string =>
    options.filtered
      ? `collection=${collection}&filter[n][gte]=${i % 100}&filter[status][ne]=s${i}`
      : `collection=${collection}`;
  const queries = Array.from({ length: options.streams }, (_, i) => query(i));
  const { counts, close } = await openStreams(service, key, queries, (i, chunk) => {
    // The stream follows this collection alone: its drop is the one collection deletion.
    if (chunk.includes('"type":"deleted","resource":"collection"')) ended[i] = true;
  });
  const commandsBefore = await commands(service.metricsUrl);
  const cpuBefore = cpuSecondsOf(service.child.pid);
  const started = performance.now();
  await changes(service, key, collection, options.changes);
  const deadline = Date.now() + options.timeoutMs;
  while (ended.some((e) => !e) && Date.now() < deadline)
    await new Promise((r) => setTimeout(r, 20));
  const seconds = (performance.now() - started) / 1000;
  const cpu = cpuSecondsOf(service.child.pid) - cpuBefore;
  const commandCount = (await commands(service.metricsUrl)) - commandsBefore;
  close();
  // Every stream got the collection's creation and drop besides the item events.
  const delivered = counts.reduce((sum, c) => sum + Math.max(0, c - 2), 0);
  return {
    label,
    streams: options.streams,
    changes: options.changes,
    delivered,
    seconds: round(seconds),
    deliveredPerSecond: Math.round(delivered / seconds),
    cpuMsPerChange: round((cpu * 1000) / options.changes),
    commandsPerChange: round(commandCount / options.changes),
    incomplete: ended.filter((e) => !e).length,
  };
}

/** The stored priors of the collection's item events, by type: average BSON bytes. */
async function priorSizes(db: Db): Promise<{ updated: number; deleted: number }> {
  const sizes = { updated: [] as number[], deleted: [] as number[] };
  const events = db.collection('events').find({ resource: 'item', prior: { $exists: true } });
  for await (const event of events) {
    const list = event.type === 'updated' ? sizes.updated : sizes.deleted;
    list.push(BSON.calculateObjectSize({ prior: event.prior as object }));
  }
  const mean = (list: number[]) =>
    list.length ? Math.round(list.reduce((a, b) => a + b, 0) / list.length) : 0;
  return { updated: mean(sizes.updated), deleted: mean(sizes.deleted) };
}

/** The prior computation itself, timed in this process on the service's built code. */
async function priorMicros(): Promise<number> {
  const { priorOf } = (await import(join(SERVICE_DIST, 'events', 'item-images.js'))) as {
    priorOf: (before: object, after: object) => unknown;
  };
  const before = {
    _id: 'i1',
    ...itemValues(1),
    _createdAt: new Date(0).toISOString(),
    _updatedAt: new Date(0).toISOString(),
  };
  const after = { ...before, ...itemValues(2), _updatedAt: new Date().toISOString() };
  const rounds = 100_000;
  const started = performance.now();
  for (let i = 0; i < rounds; i += 1) priorOf(before, after);
  return round(((performance.now() - started) * 1000) / rounds, 3);
}

export async function liveQueries(
  service: Target,
  key: string,
  db: Db,
  options: { streams: number; changes: number; timeoutMs: number },
): Promise<LiveQueryResult> {
  const none = await leg(service, key, 'none', { ...options, streams: 0, filtered: false });
  const unfiltered = await leg(service, key, 'unfiltered', { ...options, filtered: false });
  const live = await leg(service, key, 'live', { ...options, filtered: true });
  return {
    legs: [none, unfiltered, live],
    feedReadsPerChange: {
      unfiltered: round(unfiltered.commandsPerChange - none.commandsPerChange),
      live: round(live.commandsPerChange - none.commandsPerChange),
    },
    priorBytes: await priorSizes(db),
    priorMicros: await priorMicros(),
  };
}

export function liveQueriesMarkdown(result: LiveQueryResult | undefined): string {
  if (!result) return '';
  const rows = result.legs.map(
    (l) =>
      `| ${l.label} | ${l.streams} | ${l.changes} | ${l.delivered.toLocaleString('en-US')} | ${l.seconds} | ${l.deliveredPerSecond.toLocaleString('en-US')} | ${l.cpuMsPerChange} | ${l.commandsPerChange} | ${l.incomplete} |`,
  );
  return [
    '## Change feed: live queries',
    '',
    `Streams on one namespace while ${result.legs[0]?.changes ?? 0} changes (a create in four, updates, a delete in four) go through the service one after the other: none, unfiltered streams, and live queries with a distinct filter each (\`filter[n][gte]=<i>&filter[status][ne]=s<i>\`). The time runs from the first change until every stream has the collection's drop that follows the last. \`DB cmds/change\`: the service's database commands (\`mongodb_commands_total\`) per change, the writes' own included.`,
    '',
    '| streams | count | changes | events delivered | seconds | events/s | CPU ms/change | DB cmds/change | streams short |',
    '| --- | --- | --- | --- | --- | --- | --- | --- | --- |',
    ...rows,
    '',
    `Feed reads per change the streams add (DB cmds/change less the leg without streams): unfiltered ${result.feedReadsPerChange.unfiltered}, live queries ${result.feedReadsPerChange.live}.`,
    `What an event stores for live queries (\`prior\`): ${result.priorBytes.updated} bytes on an update (the changed fields' earlier values), ${result.priorBytes.deleted} bytes on a deletion (the item); computing an update's prior takes ${result.priorMicros} µs.`,
    '',
  ].join('\n');
}
