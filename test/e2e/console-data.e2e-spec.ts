import type { Page } from 'playwright-core';
import {
  callApi,
  go,
  seriousA11yViolations,
  signIn,
  startConsole,
  type ConsoleHarness,
  type ConsolePage,
} from '../support/console-browser';
import { createSubKey, createUser, type TestUser } from '../support/factories';
import { until } from '../support/until';
import { parseChangeEvent, streamEvents, type StreamMessage } from '../../client/src';

/**
 * The console's data views in a real browser: collections, items with filters and keyset paging,
 * the If-Match editor and its conflict view, explain and indexes, the live panel, a sub key's
 * confinement, hostile data shown as text, and axe on every view.
 */
jest.setTimeout(240_000);

let h: ConsoleHarness;
let user: TestUser;
/** Long enough for any load; a change that never arrives still fails. */
const LIVE_WAIT_MS = 20_000;

beforeAll(async () => {
  h = await startConsole(__filename);
  user = await createUser(h.t);
}, 240_000);
afterAll(async () => h?.close());

/** Calls the API and expects `status`; answers the body. */
async function api(
  key: string,
  method: string,
  path: string,
  status: number,
  body?: unknown,
): Promise<unknown> {
  const res = await callApi(h.base, key, method, path, body);
  if (res.status !== status)
    throw new Error(`${method} ${path}: ${res.status} ${JSON.stringify(res.body)}`);
  return res.body;
}

interface Opened extends ConsolePage {
  /**
   * The page's errors but the failed loads it expects: the API answers a flow provokes on
   * purpose (a 412 of a conflicting save, the 404 of a rule that is not set), each named by its
   * path and status.
   */
  unexpected: () => string[];
  expectFailure: (path: string, status: number) => void;
}

async function openSignedIn(
  key = user.apiKey,
  viewport?: { width: number; height: number },
): Promise<Opened> {
  const opened = await h.open(viewport);
  const expected: { path: string; status: number }[] = [];
  const tolerated: string[] = [];
  opened.page.on('console', (message) => {
    if (message.type() !== 'error') return;
    const url = new URL(message.location().url || 'http://invalid/');
    const text = `console: ${message.text()}`;
    if (
      expected.some(
        (each) => url.pathname === each.path && text.includes(`status of ${each.status}`),
      )
    )
      tolerated.push(text);
  });
  await signIn(opened.page, key);
  return {
    ...opened,
    expectFailure: (path, status) => expected.push({ path, status }),
    unexpected: () => {
      const left = [...opened.errors];
      for (const text of tolerated) {
        const at = left.indexOf(text);
        if (at !== -1) left.splice(at, 1);
      }
      return left;
    },
  };
}

/** The `_id`s of the items table, in order. */
function itemIds(page: Page): Promise<string[]> {
  return page.getByRole('region', { name: 'Items' }).getByRole('rowheader').allTextContents();
}

/** Waits for the items table to hold exactly `ids`. */
async function expectItems(page: Page, ids: string[]): Promise<void> {
  let shown: string[] = [];
  try {
    await until('the items table', async () => {
      shown = await itemIds(page);
      return JSON.stringify(shown) === JSON.stringify(ids);
    });
  } catch {
    expect(shown).toEqual(ids);
  }
}

async function addCondition(page: Page, n: number, field: string, op: string, value: string) {
  await page.getByRole('button', { name: 'Add condition' }).click();
  await page.getByLabel(`Field ${n}`, { exact: true }).fill(field);
  await page.getByLabel(`Operator ${n}`, { exact: true }).selectOption(op);
  await page.getByLabel(`Value ${n}`, { exact: true }).fill(value);
}

async function expectNoA11yViolations(page: Page): Promise<void> {
  expect(await seriousA11yViolations(page)).toEqual([]);
}

it('creates a collection by adding an item, then filters and sorts its items', async () => {
  const { page, unexpected } = await openSignedIn();
  await go(page, '/data');
  await page.getByRole('heading', { name: 'Collections', level: 1 }).waitFor();
  await page.getByLabel('Collection', { exact: true }).fill('fruits');
  await page.getByLabel('Item (JSON)').fill('{"_id":"apple","kind":"fruit","price":3}');
  await page.getByRole('button', { name: 'Create item' }).click();
  await page.getByRole('heading', { name: /fruits/, level: 1 }).waitFor();
  await expectItems(page, ['apple']);
  expect(await api(user.apiKey, 'GET', '/data/fruits/count', 200)).toEqual({ count: 1 });
  await expectNoA11yViolations(page);

  const more = [
    { _id: 'banana', kind: 'fruit', price: 1 },
    { _id: 'cherry', kind: 'fruit', price: 8 },
    { _id: 'kale', kind: 'vegetable', price: 5 },
    { _id: 'date', kind: 'fruit', price: 5 },
  ];
  await api(user.apiKey, 'POST', '/data/fruits/bulk', 200, { items: more });
  await addCondition(page, 1, 'kind', 'eq', 'fruit');
  await addCondition(page, 2, 'price', 'gte', '3');
  await page.getByLabel('Sort by').fill('price');
  await page.getByLabel('Order').selectOption('desc');
  await page.getByRole('button', { name: 'Apply' }).click();
  await expectItems(page, ['cherry', 'date', 'apple']);

  // One item deleted from its row, after a confirmation.
  await page.getByRole('button', { name: 'Delete item date' }).click();
  await page
    .getByRole('dialog', { name: 'Delete this item?' })
    .getByRole('button', { name: 'Delete item' })
    .click();
  await expectItems(page, ['cherry', 'apple']);
  expect(await api(user.apiKey, 'GET', '/data/fruits/count', 200)).toEqual({ count: 4 });

  // Deleting by the filter first says how many items match (GET /data/{c}/count).
  await page.getByRole('button', { name: 'Delete matching items…' }).click();
  const confirm = page.getByRole('dialog', { name: 'Delete the matching items?' });
  await confirm.getByText('2 items of fruits match the filter.').waitFor();
  await confirm.getByRole('button', { name: 'Delete 2 items' }).click();
  await page.getByRole('status').filter({ hasText: 'Deleted 2 items.' }).waitFor();
  await page.getByText('No items.').waitFor();
  expect(await api(user.apiKey, 'GET', '/data/fruits?sort=_id&sortOrder=asc', 200)).toMatchObject([
    { _id: 'banana' },
    { _id: 'kale' },
  ]);

  // The collections list shows it with its count (GET /data/{c}/stats).
  await go(page, '/data');
  await page.getByRole('row', { name: /fruits\s*2/ }).waitFor();
  await page.getByText(/^Collections: 1 of \d+ in this branch\.$/).waitFor();
  await expectNoA11yViolations(page);
  expect(unexpected()).toEqual([]);
});

it('pages through 1,000 items forwards to the end and back to the start', async () => {
  const ids = Array.from({ length: 1000 }, (_each, n) => `p-${String(n).padStart(4, '0')}`);
  for (let start = 0; start < ids.length; start += 500) {
    const items = ids.slice(start, start + 500).map((_id, n) => ({ _id, n: start + n }));
    await api(user.apiKey, 'POST', '/data/pages/bulk', 200, { items });
  }
  const { page, unexpected } = await openSignedIn();
  await go(page, '/data/pages');
  await page.getByLabel('Page size').fill('100');
  await page.getByRole('button', { name: 'Apply' }).click();
  await expectItems(page, ids.slice(0, 100));

  const next = page.getByRole('button', { name: 'Next page' });
  const previous = page.getByRole('button', { name: 'Previous page' });
  const turn = async (button: typeof next): Promise<string[]> => {
    const shown = await itemIds(page);
    await button.click();
    let now: string[] = [];
    await until('the next page', async () => {
      now = await itemIds(page);
      return now.length > 0 && now[0] !== shown[0];
    });
    return now;
  };

  const forwards: string[][] = [await itemIds(page)];
  expect(await previous.isDisabled()).toBe(true);
  while (await next.isEnabled()) forwards.push(await turn(next));
  expect(forwards).toHaveLength(10);
  expect(forwards.flat()).toEqual(ids);

  const backwards: string[][] = [forwards.at(-1) ?? []];
  while (await previous.isEnabled()) backwards.push(await turn(previous));
  expect(backwards.reverse()).toEqual(forwards);
  expect(backwards.flat()).toEqual(ids);
  await page.setViewportSize({ width: 390, height: 844 });
  await expectNoA11yViolations(page);
  expect(unexpected()).toEqual([]);
});

it('shows a conflicting change on save (412), then overwrites it, or reloads it', async () => {
  await api(user.apiKey, 'POST', '/data/edits', 200, {
    item: { _id: 'e1', status: 'draft', n: 1 },
  });
  const { page, unexpected, expectFailure } = await openSignedIn();
  expectFailure('/data/edits/_id/e1', 412);
  await go(page, '/data/edits/items/e1');
  const editor = page.getByLabel('Item (JSON)');
  await until('the item in the editor', async () => (await editor.inputValue()).includes('draft'));
  await expectNoA11yViolations(page);

  // Changed through the API after the editor read it: the save is refused and shows the change.
  await api(user.apiKey, 'PUT', '/data/edits/_id/e1', 200, { values: { status: 'api' } });
  await editor.fill((await editor.inputValue()).replace('"draft"', '"mine"'));
  await page.getByRole('button', { name: 'Save', exact: true }).click();
  const conflict = page
    .getByRole('alert')
    .filter({ hasText: 'The item changed since you opened it' });
  await conflict.waitFor();
  expect(await conflict.getByLabel('Current item').textContent()).toContain('"status": "api"');
  expect(await conflict.getByLabel('Your edit').textContent()).toContain('"status": "mine"');
  expect(await conflict.textContent()).toContain('Changed fields: status');
  expect(await api(user.apiKey, 'GET', '/data/edits/_id/e1', 200)).toMatchObject({ status: 'api' });

  await conflict.getByRole('button', { name: 'Overwrite' }).click();
  await page.getByRole('status').filter({ hasText: 'Saved.' }).waitFor();
  expect(await api(user.apiKey, 'GET', '/data/edits/_id/e1', 200)).toMatchObject({
    status: 'mine',
    n: 1,
  });

  // Again, and this time the user takes the API's value and drops the edit.
  await api(user.apiKey, 'PUT', '/data/edits/_id/e1', 200, { values: { status: 'api-2' } });
  await editor.fill((await editor.inputValue()).replace('"mine"', '"mine-2"'));
  await page.getByRole('button', { name: 'Save', exact: true }).click();
  await conflict.waitFor();
  await conflict.getByRole('button', { name: 'Reload (discard my edit)' }).click();
  await conflict.waitFor({ state: 'detached' });
  expect(await editor.inputValue()).toContain('"status": "api-2"');
  expect(await editor.inputValue()).not.toContain('mine-2');
  expect(await api(user.apiKey, 'GET', '/data/edits/_id/e1', 200)).toMatchObject({
    status: 'api-2',
  });
  expect(unexpected()).toEqual([]);
});

it('explains a query on an unindexed field and creates the suggested index in one click', async () => {
  await api(user.apiKey, 'POST', '/data/plans/bulk', 200, {
    items: [
      { _id: 'a', color: 'red' },
      { _id: 'b', color: 'blue' },
      { _id: 'c', color: 'red' },
    ],
  });
  const { page, unexpected } = await openSignedIn();
  await go(page, '/data/plans');
  await addCondition(page, 1, 'color', 'eq', 'red');
  await page.getByRole('button', { name: 'Apply' }).click();
  await expectItems(page, ['a', 'c']);
  await page.getByRole('link', { name: 'Indexes' }).click();

  const verdict = page.locator('.verdict');
  await verdict.waitFor();
  expect(await verdict.textContent()).toMatch(/^No index serves this query/);
  // The index list is a request of its own, apart from the verdict's: wait for its row.
  await page.getByRole('rowheader', { name: '_id_', exact: true }).waitFor();
  expect(await page.getByRole('rowheader').allTextContents()).toEqual(['_id_']);
  await expectNoA11yViolations(page);

  await page.getByRole('button', { name: 'Create the suggested index' }).click();
  await until('an index serves the query', async () =>
    /(Uses the index|The index) color_1/.test((await verdict.textContent()) ?? ''),
  );
  const collections = (await api(user.apiKey, 'GET', '/data', 200)) as {
    name: string;
    indexes: { name: string; fields: Record<string, number> }[];
  }[];
  const created = collections
    .find((each) => each.name === 'plans')
    ?.indexes.find((index) => index.name !== '_id_');
  expect(Object.keys(created?.fields ?? {})[0]).toBe('color');
  const name = created?.name ?? '';
  await page.getByRole('rowheader', { name, exact: true }).waitFor();
  expect(await page.getByRole('rowheader').allTextContents()).toEqual(['_id_', name]);
  expect(await page.getByRole('button', { name: 'Create the suggested index' }).count()).toBe(0);
  expect(unexpected()).toEqual([]);
});

// How soon a change reaches the panel is the feed's latency, measured by the benchmark (the SSE
// fan-out); here only that it arrives, whatever the machine's load.
it('shows a change made through the API in the live panel', async () => {
  await api(user.apiKey, 'POST', '/data/feed', 200, { item: { _id: 'first', n: 1 } });
  const { page, unexpected } = await openSignedIn();
  await go(page, '/data/feed/live');
  await page.getByRole('status').filter({ hasText: 'Live: waiting for changes.' }).waitFor();
  await expectNoA11yViolations(page);

  await api(user.apiKey, 'POST', '/data/feed', 200, { item: { _id: 'live-1', note: 'hello' } });
  const row = page
    .getByRole('row')
    .filter({ has: page.getByRole('rowheader', { name: 'live-1' }) });
  await row.waitFor({ timeout: LIVE_WAIT_MS });
  expect(await row.getByRole('cell', { name: 'created', exact: true }).count()).toBe(1);
  expect(await row.textContent()).toContain('hello');

  await api(user.apiKey, 'PUT', '/data/feed/_id/live-1', 200, { values: { note: 'again' } });
  await row
    .filter({ has: page.getByRole('cell', { name: 'updated', exact: true }) })
    .waitFor({ timeout: LIVE_WAIT_MS });

  // With a filter on the Items tab the panel is a live query: an item that starts matching enters.
  await page.getByRole('link', { name: 'Items' }).click();
  await addCondition(page, 1, 'note', 'eq', 'wanted');
  await page.getByRole('button', { name: 'Apply' }).click();
  await page.getByText('No items.').waitFor();
  await page.getByRole('link', { name: 'Live' }).click();
  await page.getByText('Items of the Items tab’s filter', { exact: false }).waitFor();
  await page.getByRole('status').filter({ hasText: 'Live: waiting for changes.' }).waitFor();
  await api(user.apiKey, 'POST', '/data/feed', 200, { item: { _id: 'other', note: 'unwanted' } });
  await api(user.apiKey, 'PUT', '/data/feed/_id/live-1', 200, { values: { note: 'wanted' } });
  const matching = page
    .getByRole('row')
    .filter({ has: page.getByRole('cell', { name: 'entered', exact: true }) });
  await matching.waitFor({ timeout: LIVE_WAIT_MS });
  expect(await matching.getByRole('rowheader').allTextContents()).toEqual(['live-1']);
  // The item the filter does not select never shows.
  expect(await page.getByRole('rowheader', { name: 'other' }).count()).toBe(0);
  expect(unexpected()).toEqual([]);
});

it('shows a sub key only its own items', async () => {
  const mine = await createSubKey(h.t, user, { clientId: 'app-a' });
  const other = await createSubKey(h.t, user, { clientId: 'app-b' });
  await api(user.apiKey, 'POST', '/data/shared', 200, { item: { _id: 'by-root' } });
  await api(other.apiKey, 'POST', '/data/shared', 200, { item: { _id: 'by-other' } });
  await api(mine.apiKey, 'POST', '/data/shared/bulk', 200, {
    items: [{ _id: 'mine-1' }, { _id: 'mine-2' }],
  });
  const { page, unexpected } = await openSignedIn(mine.apiKey);
  await go(page, '/data/shared');
  await expectItems(page, ['mine-1', 'mine-2']);
  // The same page as the root key sees it: all four, so the view above was narrowed by the key.
  expect(
    (
      (await api(user.apiKey, 'GET', '/data/shared?sort=_id&sortOrder=asc', 200)) as {
        _id: string;
      }[]
    )
      .map((item) => item._id)
      .sort(),
  ).toEqual(['by-other', 'by-root', 'mine-1', 'mine-2']);
  expect(unexpected()).toEqual([]);
});

it('shows hostile values and field names as text, in the table and in the editor', async () => {
  const values = [
    '<img src=x onerror="window.__pwned=1">',
    '<script>window.__pwned=1</script>',
    'javascript:window.__pwned=1',
  ];
  // Field names cannot hold `.` or `"` (the service refuses them), so these say the same without.
  const fields = [
    "<img src=x onerror=window['__pwned']=1>",
    "<script>window['__pwned']=1</script>",
    "javascript:window['__pwned']=1",
  ];
  const item: Record<string, string> = { _id: 'javascript:window.__pwned=1' };
  fields.forEach((field, n) => (item[field] = values[n] ?? ''));
  await api(user.apiKey, 'POST', '/data/hostile', 200, { item: { ...item, plain: values[0] } });
  await api(user.apiKey, 'POST', '/data/hostile', 200, {
    item: { _id: values[1], plain: values[2] },
  });

  const { page, unexpected } = await openSignedIn();
  await go(page, '/data/hostile');
  await expectItems(page, [values[1] ?? '', item._id ?? ''].sort());
  for (const field of fields)
    await page.getByRole('columnheader', { name: field, exact: true }).waitFor();
  for (const value of values)
    expect(await page.getByRole('cell', { name: value, exact: true }).count()).toBeGreaterThan(0);
  await page
    .getByText(values[0] ?? '', { exact: true })
    .first()
    .waitFor();
  await expectNoA11yViolations(page);

  await page.getByRole('link', { name: item._id, exact: true }).click();
  const editor = page.getByLabel('Item (JSON)');
  await until('the item in the editor', async () =>
    (await editor.inputValue()).includes('__pwned'),
  );
  const shown: unknown = JSON.parse(await editor.inputValue());
  expect(shown).toMatchObject({ ...item, plain: values[0] });
  await page.getByRole('heading', { name: `Item ${item._id}`, exact: true }).waitFor();

  expect(await page.evaluate('window.__pwned')).toBeUndefined();
  expect(await page.locator('img').count()).toBe(0);
  expect(unexpected()).toEqual([]);
});

it('passes axe on the collections, schema and expiry views', async () => {
  await api(user.apiKey, 'POST', '/data/ruled', 200, { item: { _id: 'r1', title: 7 } });
  const { page, unexpected, expectFailure } = await openSignedIn();
  // A collection without a schema or an expiry rule: the tab asks, and the API answers 404.
  expectFailure('/data/ruled/schema', 404);
  expectFailure('/data/ruled/expiry', 404);
  await go(page, '/data');
  await page.getByRole('row', { name: /ruled/ }).waitFor();
  await expectNoA11yViolations(page);

  await go(page, '/data/ruled/schema');
  await page.getByText('No schema: writes are not checked.').waitFor();
  await page.getByText('No expiry rule: items stay until deleted.').waitFor();
  await page
    .getByLabel('JSON Schema (draft 2020-12)')
    .fill('{"type":"object","properties":{"title":{"type":"string"}}}');
  await page.getByLabel('On a violation').selectOption('warn');
  await page.getByRole('button', { name: 'Save schema' }).click();
  await page.getByText(/Writes are checked against this schema/).waitFor();
  await page.getByRole('button', { name: 'Check items' }).click();
  await page
    .getByRole('status')
    .filter({ hasText: '1 items checked, 1 break the schema.' })
    .waitFor();
  await page.getByRole('rowheader', { name: 'r1' }).waitFor();
  expect(await api(user.apiKey, 'GET', '/data/ruled/schema', 200)).toMatchObject({
    action: 'warn',
  });
  await page.getByLabel('Expires after (seconds)').fill('3600');
  await page.getByRole('button', { name: 'Save expiry' }).click();
  await page.getByText(/Items expire 3600 s after their _createdAt/).waitFor();
  expect(await api(user.apiKey, 'GET', '/data/ruled/expiry', 200)).toMatchObject({
    field: '_createdAt',
    afterSeconds: 3600,
  });
  await expectNoA11yViolations(page);
  expect(unexpected()).toEqual([]);
});

it('streamEvents resumes a dropped stream with Last-Event-ID: every event once, in order', async () => {
  await api(user.apiKey, 'POST', '/data/resume/bulk', 200, {
    items: [{ _id: 'r1' }, { _id: 'r2' }, { _id: 'r3' }],
  });
  const page = (await api(user.apiKey, 'GET', '/events?after=0&collection=resume', 200)) as {
    events: { id: string }[];
  };
  const expected = page.events.map((event) => event.id);
  expect(expected.length).toBeGreaterThanOrEqual(4);

  // The first connection ends right after its first message, as a dropped connection would.
  const sentLastEventIds: (string | null)[] = [];
  const cutting = async (request: Request): Promise<Response> => {
    sentLastEventIds.push(request.headers.get('Last-Event-ID'));
    const response = await fetch(request);
    if (sentLastEventIds.length > 1 || !response.body) return response;
    const reader = response.body.getReader();
    const decoder = new TextDecoder();
    const encoder = new TextEncoder();
    let text = '';
    let sent = 0;
    const body = new ReadableStream<Uint8Array>({
      async pull(controller) {
        const { done, value } = await reader.read();
        if (done) return controller.close();
        text += decoder.decode(value, { stream: true });
        const first = /^data: .*\n\n/m.exec(text);
        const upTo = first ? first.index + first[0].length : text.length;
        controller.enqueue(encoder.encode(text.slice(sent, upTo)));
        sent = upTo;
        if (first) {
          controller.close();
          await reader.cancel();
        }
      },
    });
    return new Response(body, { status: response.status, headers: response.headers });
  };

  const seen: StreamMessage[] = [];
  const retries: number[] = [];
  const controller = new AbortController();
  const done = streamEvents(
    {
      baseUrl: h.base,
      apiKey: user.apiKey,
      fetch: cutting,
      signal: controller.signal,
      onRetry: (_reason, delayMs) => retries.push(delayMs),
    },
    { collection: 'resume', after: '0' },
    (message) => {
      seen.push(message);
      if (seen.length === expected.length) controller.abort();
    },
  );
  const progress = () =>
    JSON.stringify({ seen: seen.length, of: expected.length, sentLastEventIds, retries });
  await until('every event', () => seen.length >= expected.length, LIVE_WAIT_MS).catch(
    (error: Error) => Promise.reject(new Error(`${error.message}: ${progress()}`)),
  );
  // An abort ends streamEvents at once; were it ever not to, say where the stream stood.
  let bound: NodeJS.Timeout | undefined;
  await Promise.race([
    done,
    new Promise((_, reject) => {
      bound = setTimeout(
        () => reject(new Error(`streamEvents did not end on abort: ${progress()}`)),
        LIVE_WAIT_MS,
      );
    }),
  ]).finally(() => clearTimeout(bound));
  expect(seen.map((message) => message.id)).toEqual(expected);
  expect(seen.map((message) => parseChangeEvent(message)?.id)).toEqual(expected);
  expect(sentLastEventIds).toEqual([null, expected[0]]);
  // The service's `retry: 2000` sets the delay before reconnecting.
  expect(retries).toEqual([2000]);
});

it('streamEvents rejects with the problem when the service refuses the stream', async () => {
  const refused = streamEvents(
    { baseUrl: h.base, apiKey: user.apiKey },
    // `entered` needs a live query's filter: 400.
    { collection: 'resume', type: 'entered' },
    () => undefined,
  );
  await expect(refused).rejects.toMatchObject({ status: 400, problem: { status: 400 } });
});
