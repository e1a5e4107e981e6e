// The search-and-expand comparison's set-up: a collection of SEARCH_ITEMS items (a few hundred in
// a smoke run) written under a search configuration (each create stores its words), a smaller
// one whose configuration is built after its items are written (the build's time is reported: on
// FerretDB every write of a build scans the collection, so a build's time grows with the square
// of its size), and an orders collection whose items reference customers. The variants read
// pages of 50: a search, the same collection's plain list, a list with one expansion and the same
// list without it.
import { isArray, prop } from './api';
import type { Ask } from './comparisons';
import { idleBackground, type IdleBackground } from './idle';

/**
 * Items of the searched collection: the 10,000, or BENCH_SEARCH_ITEMS. On FerretDB the
 * feed's polls scan the events of every create, so at 10,000 the database is saturated by them
 * and per-request figures drown (docs/benchmarks.md, "Search and expand").
 */
const SEARCH_ITEMS = Number(process.env.BENCH_SEARCH_ITEMS ?? 10_000);
/** Items of the collection whose configuration is built after they are written. */
const BUILT_ITEMS = 1_000;

/**
 * The sizes one run sets up. The smoke run (CI) checks only that the comparison works, so it
 * takes a few hundred items and skips the idle watch: at the full sizes its set-up alone took
 * four and a half minutes of a CI run.
 */
export interface SearchExpandSizes {
  searched: number;
  built: number;
  /** Whether the instance is watched with no request after the set-up (IdleBackground). */
  watchIdle: boolean;
}

export const SEARCH_EXPAND_SIZES: SearchExpandSizes = {
  searched: SEARCH_ITEMS,
  built: BUILT_ITEMS,
  watchIdle: true,
};
export const SMOKE_SEARCH_EXPAND_SIZES: SearchExpandSizes = {
  searched: 200,
  built: 50,
  watchIdle: false,
};
/** Orders and customers of the expansion: one page of orders, each naming a customer. */
const ORDERS = 200;
const CUSTOMERS = 50;
/** The longest the build may take before the comparison gives up. */
const BUILD_TIMEOUT_MS = 15 * 60_000;

/**
 * The words of the titles: 64 of them, so that a query of a whole word and a prefix of another
 * finds a few dozen of the 10,000 items — a page, as a search box shows.
 */
const VOCABULARY = Array.from({ length: 64 }, (_, i) => {
  const consonants = 'bcdfghklmnprstvz';
  const vowels = 'aeiou';
  const c = (k: number): string => consonants[k % consonants.length] ?? 'b';
  const v = (k: number): string => vowels[k % vowels.length] ?? 'a';
  return `${c(i)}${v(i)}${c(i * 7 + 3)}${v(i * 3 + 1)}${c(i * 5 + 11)}`;
});

const word = (k: number): string => VOCABULARY[k % VOCABULARY.length] ?? 'x';

/** The `q` values the search variant takes in turn: a whole word and the prefix of another. */
export const SEARCH_QUERIES = Array.from(
  { length: 10 },
  (_, i) => `${word(i * 5)} ${word(i * 5 + 1).slice(0, 3)}`,
);

export interface SearchExpandBench {
  /** The searched collection. */
  searched: string;
  /** The sizes it was set up with. */
  sizes: SearchExpandSizes;
  /** How long the build of `sizes.built` items' word lists took, in seconds. */
  buildSeconds: number;
  /** What the instance does with no request at all, once set up; not watched in a smoke run. */
  idle?: IdleBackground;
  orders: string;
  customers: string;
}

async function bulk(ask: Ask, collection: string, items: object[]): Promise<string[] | string> {
  const ids: string[] = [];
  for (let at = 0; at < items.length; at += 500) {
    const made = await ask('service', 'POST', `/data/${collection}/bulk`, {
      body: { items: items.slice(at, at + 500) },
    });
    const results = prop(made.body, 'results');
    if (made.status !== 200 || !isArray(results))
      return `POST /data/${collection}/bulk answered ${made.status}`;
    for (const result of results) {
      const id = prop(result, '_id');
      if (typeof id !== 'string') return `POST /data/${collection}/bulk did not name an _id`;
      ids.push(id);
    }
  }
  return ids;
}

/** Configures search on `collection` and waits for the build; its seconds, or why not. */
async function buildSearch(ask: Ask, collection: string): Promise<number | string> {
  const started = Date.now();
  const put = await ask('service', 'PUT', `/data/${collection}/search`, {
    body: { fields: ['title', 'body'], minTokenLength: 2 },
  });
  if (put.status !== 202) return `PUT /data/{c}/search answered ${put.status}`;
  for (;;) {
    const got = await ask('service', 'GET', `/data/${collection}/search`);
    const state = prop(got.body, 'state');
    if (state === 'ready') return (Date.now() - started) / 1000;
    if (state !== 'building') return `the build ended ${String(state)} (${got.status})`;
    if (Date.now() - started > BUILD_TIMEOUT_MS) return 'the build did not end in time';
    await new Promise((resolve) => setTimeout(resolve, 1000));
  }
}

/**
 * How long the instance is watched with no request, after the set-up. On FerretDB a list of the
 * searched collection takes seconds (the database scans it), so the rounds see few requests, and
 * what the instance does meanwhile by itself (its polls) is a part of each request's figures: the
 * report states it, so that it can be told apart.
 */
const IDLE_WATCH_MS = 15_000;

/** Makes the three collections and builds the search; a string says why it could not. */
export async function prepareSearchExpandBench(
  ask: Ask,
  runTag: string,
  sizes: SearchExpandSizes,
): Promise<SearchExpandBench | string> {
  const texts = (count: number) =>
    Array.from({ length: count }, (_, n) => ({
      n,
      title: `${word(n)} ${word(n * 7 + 1)} ${word(n * 13 + 2)}`,
      body: `Item ${n}: ${word(n * 3)}, ${word(n * 11 + 5)} — ${word(n * 17 + 9)}.`,
    }));
  // Configured while empty (the build has nothing to walk), then filled: creates store words.
  const searched = `bench-search-${runTag}`;
  await ask('service', 'POST', `/data/${searched}/bulk`, { body: { items: [{ n: -1 }] } });
  const configured = await buildSearch(ask, searched);
  if (typeof configured === 'string') return configured;
  const written = await bulk(ask, searched, texts(sizes.searched));
  if (typeof written === 'string') return written;
  // Filled, then configured: the build walks every item.
  const built = `bench-built-${runTag}`;
  const filled = await bulk(ask, built, texts(sizes.built));
  if (typeof filled === 'string') return filled;
  const buildSeconds = await buildSearch(ask, built);
  if (typeof buildSeconds === 'string') return buildSeconds;

  const customers = `bench-customers-${runTag}`;
  const customerIds = await bulk(
    ask,
    customers,
    Array.from({ length: CUSTOMERS }, (_, n) => ({ name: `Customer ${n}`, tier: n % 3 })),
  );
  if (typeof customerIds === 'string') return customerIds;
  const orders = `bench-orders-${runTag}`;
  const orderIds = await bulk(
    ask,
    orders,
    Array.from({ length: ORDERS }, (_, n) => ({
      n,
      total: n * 1.5,
      customer: customerIds[n % CUSTOMERS],
    })),
  );
  if (typeof orderIds === 'string') return orderIds;
  const idle = sizes.watchIdle ? await idleBackground(ask, { watchMs: IDLE_WATCH_MS }) : undefined;
  if (typeof idle === 'string') return idle;
  return { searched, sizes, buildSeconds, idle, orders, customers };
}
