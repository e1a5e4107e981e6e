import type { Locator, Page } from 'playwright-core';
import { TEST_ADMIN_KEY } from '../support/app';
import {
  callApi,
  go,
  seriousA11yViolations,
  signIn,
  startConsole,
  type ConsoleHarness,
} from '../support/console-browser';
import { createApiKey, createUser, type TestUser } from '../support/factories';
import { until } from '../support/until';
import { UsageFlusher } from '../../src/usage';

/**
 * The console's plans, limits and usage: a tenant's overview (GET /me, GET /me/usage), the
 * operator's user page (its plans, limits and usage; setting a plan) and the plan catalogue, with
 * metering on and flushed every 200 ms, so that what the views show is what was counted.
 */
let h: ConsoleHarness;

beforeAll(async () => {
  h = await startConsole(__filename, { USAGE_ENABLED: 'true', USAGE_FLUSH_MS: '200' });
}, 180_000);

afterAll(async () => {
  // What is left is written now, not by the close after the database is dropped.
  if (h) await h.t.app.get(UsageFlusher).flush();
  await h?.close();
});

const today = () => new Date().toISOString().slice(0, 10);
let planCount = 0;

/** A plan of the catalogue with `limits`, made through the API. */
async function definePlan(limits: Record<string, number>): Promise<string> {
  planCount += 1;
  const name = `console-${planCount}-${Date.now()}`;
  const res = await callApi(h.base, TEST_ADMIN_KEY, 'PUT', `/admin/plans/${name}`, { limits });
  expect(res.status).toBe(200);
  return name;
}

/** `count` items written by `user`: as many write requests. */
async function writeItems(user: TestUser, count: number): Promise<void> {
  for (let i = 0; i < count; i += 1) {
    const res = await callApi(h.base, user.apiKey, 'POST', '/data/notes', { item: { n: i } });
    expect(res.status).toBe(200);
  }
}

/** Waits until the user's writes of today, as the operator reads them, are `count`. */
async function writesFlushed(user: TestUser, count: number): Promise<void> {
  const query = `tenant=${encodeURIComponent(`user:${user.subject}`)}&from=${today()}&to=${today()}`;
  await until(`${count} writes of ${user.subject} flushed`, async () => {
    const res = await callApi(h.base, TEST_ADMIN_KEY, 'GET', `/admin/usage?${query}`);
    const rows = res.body as { write: number }[];
    return res.status === 200 && rows[0]?.write === count;
  });
}

/**
 * A fresh page signed in with `key`, at `route`; `unexpected()` is the page's errors but the
 * failed loads a flow provokes on purpose, each named by its path and status (`expectFailure`).
 */
async function openAt(key: string, route: string, viewport?: { width: number; height: number }) {
  const opened = await h.open(viewport);
  const expected: { path: string; status: number }[] = [];
  const tolerated: string[] = [];
  opened.page.on('console', (message) => {
    if (message.type() !== 'error') return;
    const { pathname } = new URL(message.location().url || 'http://invalid/');
    const text = `console: ${message.text()}`;
    if (
      expected.some((each) => pathname === each.path && text.includes(`status of ${each.status}`))
    )
      tolerated.push(text);
  });
  await signIn(opened.page, key);
  await go(opened.page, route);
  return {
    ...opened,
    expectFailure: (path: string, status: number) => expected.push({ path, status }),
    unexpected: () => opened.errors.filter((text) => !tolerated.includes(text)),
  };
}

/** The cells after the row header `name` of the table named `table`. */
async function rowOf(page: Page, table: string | RegExp, name: string): Promise<string[]> {
  const row = page
    .getByRole('table', { name: table })
    .getByRole('row')
    .filter({ has: page.getByRole('rowheader', { name, exact: true }) });
  await row.waitFor();
  return row.getByRole('cell').allTextContents();
}

/** The text of the facts entry `term` (a `<dt>`) in `scope`. */
async function fact(scope: Page | Locator, term: string): Promise<string | null> {
  const entry = scope
    .locator('.facts > div')
    .filter({ has: scope.getByText(term, { exact: true }) });
  return entry.locator('dd').textContent();
}

describe('console: plans, limits and usage', () => {
  it("shows a user holding a plan its plan, every limit with its use and the last days' usage", async () => {
    const plan = await definePlan({ collections: 7, fileBytes: 2048, webhooks: 3 });
    const user = await createUser(h.t);
    const since = new Date(Date.now() - 3_600_000).toISOString();
    const until = new Date(Date.now() + 86_400_000).toISOString();
    const set = await callApi(
      h.base,
      TEST_ADMIN_KEY,
      'PUT',
      `/admin/users/${encodeURIComponent(user.subject)}/plans`,
      [{ planName: plan, since, until }],
    );
    expect(set.status).toBe(200);
    await writeItems(user, 3);
    await writesFlushed(user, 3);

    const { page, errors } = await openAt(user.apiKey, '/');
    await page.getByRole('heading', { name: 'Overview' }).waitFor();
    const limits = 'Limits';
    // Value and use: the plan's limits, the deployment's where it sets none.
    expect(await rowOf(page, limits, 'Collections')).toEqual(['7', '1']);
    expect(await rowOf(page, limits, 'File bytes')).toEqual(['2.0 KiB', '0 B']);
    expect(await rowOf(page, limits, 'Webhooks')).toEqual(['3', '0']);
    const me = (await callApi(h.base, user.apiKey, 'GET', '/me')).body as {
      limits: { indexesPerCollection: { limit: number } };
    };
    expect(await rowOf(page, limits, 'Indexes per collection')).toEqual([
      String(me.limits.indexesPerCollection.limit),
      '—',
    ]);
    expect(await fact(page, 'Active plan')).toBe(plan);
    expect(await fact(page, 'Since')).not.toBe('—');
    expect(await fact(page, 'Until')).not.toBe('never ends');
    // Today's writes are the three POSTs; the console itself only reads.
    const usage = 'Usage of the last 7 days';
    expect((await rowOf(page, usage, today()))[1]).toBe('3');
    expect((await rowOf(page, usage, 'Total'))[1]).toBe('3');
    expect(await page.getByRole('table', { name: usage }).getByRole('row').count()).toBe(9); // header, 7 days, total
    expect(await seriousA11yViolations(page)).toEqual([]);
    expect(errors).toEqual([]);
  });

  it('tells a key without usage:read that usage is not available to it, and a user without a plan that the deployment decides', async () => {
    const user = await createUser(h.t);
    // What the context bar reads (GET /me/branches, GET /teams), and not usage:read.
    const key = await createApiKey(h.t, user, {
      name: 'no usage',
      scopes: ['data:read', 'profile:read'],
    });
    const { page, errors } = await openAt(key.apiKey, '/');
    await page.getByText('Usage is not available to this key.').waitFor();
    expect(await fact(page, 'Active plan')).toBe("No plan: the deployment's limits");
    expect(await page.getByRole('table', { name: 'Usage of the last 7 days' }).count()).toBe(0);
    expect(await seriousA11yViolations(page)).toEqual([]);
    expect(errors).toEqual([]);
  });

  it("sets a plan on the operator's user page, shows a refused one's problem, and the user's GET /me follows", async () => {
    const plan = await definePlan({ collections: 4, itemsPerCollection: 50 });
    const user = await createUser(h.t);
    await writeItems(user, 2);
    await writesFlushed(user, 2);
    const { page, expectFailure, unexpected } = await openAt(
      TEST_ADMIN_KEY,
      `/admin/users/${user.subject}`,
    );
    await page.getByRole('heading', { name: `User ${user.subject}` }).waitFor();
    await page.getByText("No plan entries: the deployment's limits apply.").waitFor();
    expect(await fact(page, 'Active plan')).toBe("No plan: the deployment's limits");
    const operator = (await callApi(h.base, TEST_ADMIN_KEY, 'GET', '/me')).body as {
      limits: { collections: { limit: number } };
    };
    const deployment = String(operator.limits.collections.limit);
    expect(await rowOf(page, 'Limits', 'Collections')).toEqual([deployment, '1']);
    const usage = 'Usage of the last 7 days';
    expect((await rowOf(page, usage, today()))[1]).toBe('2');
    expect(await seriousA11yViolations(page)).toEqual([]);

    // An end before the start: the service's 400, shown as a problem; nothing is set.
    const form = page.getByRole('form', { name: 'Set a plan' });
    await form.getByLabel('Plan').selectOption(plan);
    await form.getByLabel('Until (local time)').fill('2020-01-01T00:00');
    expectFailure(`/admin/users/${encodeURIComponent(user.subject)}/plans`, 400);
    await form.getByRole('button', { name: 'Set plan' }).click();
    const problem = form.getByRole('alert');
    await problem.waitFor();
    expect(await problem.textContent()).toContain('400 VALIDATION_FAILED');
    expect(
      ((await callApi(h.base, user.apiKey, 'GET', '/me')).body as { plan: unknown }).plan,
    ).toBe(null);

    const end = new Date(Date.now() + 30 * 86_400_000);
    const local = new Date(end.getTime() - end.getTimezoneOffset() * 60_000);
    await form.getByLabel('Until (local time)').fill(local.toISOString().slice(0, 16));
    await form.getByRole('button', { name: 'Set plan' }).click();
    const entries = page.getByRole('table', { name: 'Plan entries' });
    await entries.getByRole('cell', { name: 'active', exact: true }).waitFor();
    expect(await fact(page, 'Active plan')).toBe(plan);
    expect(await rowOf(page, 'Limits', 'Items per collection')).toEqual(['50', '—']);

    // The instance that answered forgot the user's entries at once.
    const me = (await callApi(h.base, user.apiKey, 'GET', '/me')).body as {
      plan: { name: string; until: string } | null;
      limits: { collections: { limit: number }; itemsPerCollection: { limit: number } };
    };
    expect(me.plan?.name).toBe(plan);
    expect(Math.abs(Date.parse(me.plan!.until) - end.getTime())).toBeLessThan(60_000);
    expect(me.limits.collections.limit).toBe(4);
    expect(me.limits.itemsPerCollection.limit).toBe(50);
    expect(await rowOf(page, 'Limits', 'Collections')).toEqual(['4', '1']);
    expect(await seriousA11yViolations(page)).toEqual([]);

    // Removing the entry: the user is back on the deployment's limits.
    await page.getByRole('button', { name: new RegExp(`^Remove the entry ${plan} `) }).click();
    await page
      .getByRole('dialog', { name: 'Remove the plan entry?' })
      .getByRole('button', { name: 'Remove entry' })
      .click();
    await page.getByText("No plan entries: the deployment's limits apply.").waitFor();
    expect(
      ((await callApi(h.base, user.apiKey, 'GET', '/me')).body as { plan: unknown }).plan,
    ).toBe(null);
    expect(unexpected()).toEqual([]);
  });

  it('lists the catalogue with the limits each plan sets and the deployment’s for the rest', async () => {
    const plan = await definePlan({ webhooks: 9 });
    const { page, errors } = await openAt(TEST_ADMIN_KEY, '/admin/plans');
    await page.getByRole('heading', { name: 'Plans' }).waitFor();
    const operator = (await callApi(h.base, TEST_ADMIN_KEY, 'GET', '/me')).body as {
      limits: { collections: { limit: number } };
    };
    const cells = await rowOf(page, 'Plans', plan);
    // Columns: the limits in the order of the overview, then version and update time.
    expect(cells[0]).toBe(`(${operator.limits.collections.limit})`);
    expect(cells[4]).toBe('9');
    expect(cells[8]).toBe('1');
    expect(await seriousA11yViolations(page)).toEqual([]);
    expect(errors).toEqual([]);
  });

  it('keeps the user page and the catalogue usable on a narrow screen', async () => {
    const plan = await definePlan({ collections: 2 });
    const user = await createUser(h.t);
    const set = await callApi(
      h.base,
      TEST_ADMIN_KEY,
      'PUT',
      `/admin/users/${encodeURIComponent(user.subject)}/plans`,
      [{ planName: plan, since: new Date().toISOString(), until: '2100-01-01T00:00:00Z' }],
    );
    expect(set.status).toBe(200);
    await writeItems(user, 1);
    await writesFlushed(user, 1);
    const viewport = { width: 390, height: 844 };
    const { page, unexpected } = await openAt(
      TEST_ADMIN_KEY,
      `/admin/users/${user.subject}`,
      viewport,
    );
    await page.getByRole('table', { name: 'Usage of the last 7 days' }).waitFor();
    expect(await fact(page, 'Active plan')).toBe(plan);
    for (const [route, table] of [
      [`/admin/users/${user.subject}`, 'Plan entries'],
      ['/admin/plans', 'Plans'],
    ] as const) {
      await go(page, route);
      await page.getByRole('table', { name: table }).waitFor();
      expect(await seriousA11yViolations(page)).toEqual([]);
      // Nothing wider than the screen: wide tables scroll inside their own region.
      expect(await page.evaluate('document.documentElement.scrollWidth')).toBeLessThanOrEqual(
        viewport.width,
      );
    }
    expect(unexpected()).toEqual([]);
  });
});
