import { readFile } from 'node:fs/promises';
import type { Page } from 'playwright-core';
import { TEST_ADMIN_KEY } from '../support/app';
import {
  callApi,
  go,
  seriousA11yViolations,
  signIn,
  startConsole,
  type ConsoleHarness,
} from '../support/console-browser';
import { createUser, type TestUser } from '../support/factories';
import { until } from '../support/until';

/** A 1×1 PNG. */
const PNG = Buffer.from(
  'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR4nGNgYPj/HwAEAQH/ABzLhMAAAAAASUVORK5CYII=',
  'base64',
);

type StoredFile = { id: string; name: string; size: number };
type ImportedItem = { _id: string; note: string };

let h: ConsoleHarness;

beforeAll(async () => {
  // The webhook registered from the console points at this machine, which is otherwise refused.
  h = await startConsole(__filename, { WEBHOOK_ALLOW_PRIVATE: 'true' });
}, 180_000);

afterAll(() => h?.close());

/** A fresh page signed in with `apiKey`, at `route`. */
async function openAt(key: string, route: string, viewport = { width: 1280, height: 800 }) {
  const opened = await h.open(viewport);
  await signIn(opened.page, key);
  await go(opened.page, route);
  return opened;
}

/** Waits until an expression is true in the page (waitForFunction needs the eval CSP refuses). */
async function pageHolds(page: Page, expression: string): Promise<void> {
  await until(expression, async () => (await page.evaluate(expression)) === true);
}

/** Waits for a live status that says `text`. */
async function status(page: Page, text: string): Promise<void> {
  await page.getByRole('status').filter({ hasText: text }).waitFor();
}

/** Confirms the dialog named `title` with its `button`. */
async function confirm(page: Page, title: string, button: string): Promise<void> {
  await page.getByRole('dialog', { name: title }).getByRole('button', { name: button }).click();
}

/** Whether the preview <img> has loaded a picture. */
const PREVIEW_LOADED = `(() => { const img = document.querySelector('.preview img');
  return !!img && img.complete && img.naturalWidth > 0 && img.src.startsWith('blob:'); })()`;

async function upload(page: Page, name: string, mimeType: string, buffer: Buffer): Promise<void> {
  await page.getByLabel('File to upload').setInputFiles({ name, mimeType, buffer });
  await page.getByRole('button', { name: 'Upload', exact: true }).click();
  await status(page, 'Uploaded');
}

describe('console: operations views', () => {
  it('the operator finds a user by email prefix, erases it and watches the erasure finish', async () => {
    const prefix = `erase-me-${Date.now()}-`;
    const user = await createUser(h.t, { email: `${prefix}a@example.com` });
    const sibling = await createUser(h.t, { email: `${prefix}b@example.com` });
    const { page, errors } = await openAt(TEST_ADMIN_KEY, '/admin/users');

    // The prefix in upper case: the search does not mind case.
    await page.getByLabel('Email starts with').fill(prefix.toUpperCase());
    await page.getByRole('button', { name: 'Search' }).click();
    await page.getByRole('cell', { name: sibling.email }).waitFor();
    expect(await page.getByRole('table').getByRole('row').count()).toBe(3); // header, 2 users
    await page.getByRole('link', { name: user.subject }).click();
    await page.getByRole('heading', { name: `User ${user.subject}` }).waitFor();
    await page.getByRole('button', { name: 'Erase user' }).click();

    const dialog = page.getByRole('dialog', { name: `Erase the user ${user.email}?` });
    await dialog.waitFor();
    expect(await dialog.textContent()).toContain(user.subject);
    await dialog.getByRole('button', { name: 'Erase user' }).click();

    const heading = page.getByRole('heading', { name: /^Erasure [0-9a-f]{24}$/ });
    await heading.waitFor();
    const erasureId = (await heading.textContent())!.replace('Erasure ', '');
    expect(page.url()).toContain(`#/admin/erasures/${erasureId}`);
    await status(page, 'Status: finished');
    expect(await page.getByRole('listitem').filter({ hasText: 'owner: done' }).count()).toBe(1);

    expect((await callApi(h.base, user.apiKey, 'GET', '/me')).status).toBe(401);
    expect((await callApi(h.base, sibling.apiKey, 'GET', '/me')).status).toBe(200);

    await page.getByRole('link', { name: '← Erasures' }).click();
    const row = page.getByRole('row').filter({ hasText: erasureId });
    await row.waitFor();
    expect(await row.textContent()).toContain('finished');
    expect(errors).toEqual([]);
  });

  it('mints a key whose shown secret works, and revokes it', async () => {
    const user = await createUser(h.t);
    const { page, errors } = await openAt(user.apiKey, '/keys');

    await page.getByLabel('Name').fill('from the console');
    await page.getByRole('button', { name: 'Mint key' }).click();
    const secret = await page.getByLabel('The new key').inputValue();
    expect(secret).toMatch(/^pds_/);
    expect(await page.getByText('it will not be shown again').count()).toBe(1);

    const me = await callApi(h.base, secret, 'GET', '/me');
    expect(me.status).toBe(200);
    expect(me.body).toMatchObject({ kind: 'root', subject: user.subject });

    const revoke = page.getByRole('button', { name: 'Revoke the key from the console' });
    await revoke.click();
    await confirm(page, 'Revoke the key?', 'Revoke key');
    await revoke.waitFor({ state: 'detached' });

    expect((await callApi(h.base, secret, 'GET', '/me')).status).toBe(401);
    expect((await callApi(h.base, user.apiKey, 'GET', '/me')).status).toBe(200);
    expect(errors).toEqual([]);
  });

  it('uploads a PNG with progress, previews it and deletes it; a hostile name stays text', async () => {
    const user = await createUser(h.t);
    const { page, errors } = await openAt(user.apiKey, '/files');

    await upload(page, 'dot.png', 'image/png', PNG);
    const bar = page.getByLabel('Upload progress');
    expect(await bar.getAttribute('value')).toBe(String(PNG.length));
    expect(await bar.getAttribute('max')).toBe(String(PNG.length));
    await page.getByRole('cell', { name: 'dot.png', exact: true }).waitFor();

    const files = (await callApi(h.base, user.apiKey, 'GET', '/files')).body as StoredFile[];
    expect(files.map((file) => [file.name, file.size])).toEqual([['dot.png', PNG.length]]);
    await page.getByRole('button', { name: 'Open dot.png' }).click();
    await page.getByRole('img', { name: 'Preview of dot.png' }).waitFor();
    await pageHolds(page, PREVIEW_LOADED);

    const [saved] = await Promise.all([
      page.waitForEvent('download'),
      page.getByRole('button', { name: 'Download', exact: true }).click(),
    ]);
    expect(saved.suggestedFilename()).toBe('dot.png');
    expect((await readFile(await saved.path())).equals(PNG)).toBe(true);
    // The signed link goes to the clipboard and stays on screen; it downloads without a key.
    await page.context().grantPermissions(['clipboard-read', 'clipboard-write']);
    await page.getByRole('button', { name: 'Copy signed link' }).click();
    const link = await page.getByLabel('Signed link').inputValue();
    expect(await page.evaluate('navigator.clipboard.readText()')).toBe(link);
    const signed = await fetch(link);
    expect(signed.status).toBe(200);
    expect(Buffer.from(await signed.arrayBuffer()).equals(PNG)).toBe(true);

    await page.getByRole('button', { name: 'Delete dot.png' }).click();
    await confirm(page, 'Delete the file?', 'Delete file');
    await page.getByText('No files yet.').waitFor();
    expect((await callApi(h.base, user.apiKey, 'GET', `/files/${files[0]!.id}`)).status).toBe(404);
    expect((await fetch(link)).status).toBe(404);

    const hostile = '<img src=x onerror="window.__pwned=1">.png';
    await upload(page, hostile, 'image/png', PNG);
    await page.getByRole('cell', { name: hostile, exact: true }).waitFor();
    await page.getByRole('button', { name: `Open ${hostile}` }).click();
    await pageHolds(page, PREVIEW_LOADED);
    expect(await page.locator('img[src="x"]').count()).toBe(0);
    expect(await page.evaluate('typeof window.__pwned')).toBe('undefined');
    expect(errors).toEqual([]);
  });

  it("pages the files by the list's Link cursor: the 21st file on page 2, then back", async () => {
    const user = await createUser(h.t);
    for (let n = 1; n <= 21; n += 1) {
      const stored = await fetch(`${h.base}/files?name=page-${String(n).padStart(2, '0')}.txt`, {
        method: 'POST',
        headers: { 'X-Api-Key': user.apiKey, 'Content-Type': 'text/plain' },
        body: `file ${n}`,
      });
      expect(stored.status).toBe(201);
    }
    const { page, errors } = await openAt(user.apiKey, '/files');
    const pages = page.getByRole('navigation', { name: 'Files pages' });
    const named = (name: string | RegExp) => page.getByRole('cell', { name, exact: true });
    await named('page-20.txt').waitFor();
    expect(await named(/^page-\d+\.txt$/).count()).toBe(20);

    await pages.getByRole('button', { name: 'Next page' }).click();
    await named('page-21.txt').waitFor();
    expect(await named(/^page-\d+\.txt$/).count()).toBe(1);
    expect(await pages.getByRole('button', { name: 'Next page' }).isDisabled()).toBe(true);

    await pages.getByRole('button', { name: 'Previous page' }).click();
    await named('page-01.txt').waitFor();
    expect(await named(/^page-\d+\.txt$/).count()).toBe(20);
    expect(errors).toEqual([]);
  });

  it('registers a webhook and shows its (empty) deliveries', async () => {
    const user = await createUser(h.t);
    const { page, errors } = await openAt(user.apiKey, '/webhooks');
    const url = 'http://127.0.0.1:9/console-hook';

    await page.getByLabel('Endpoint URL').fill(url);
    await page.getByRole('checkbox', { name: 'updated' }).uncheck();
    await page.getByRole('button', { name: 'Register webhook' }).click();
    expect(await page.getByLabel(`Signing secret of ${url}`).inputValue()).toMatch(/^whsec_/);
    await page.getByRole('cell', { name: url, exact: true }).waitFor();

    const hooks = (await callApi(h.base, user.apiKey, 'GET', '/webhooks')).body;
    expect(hooks).toEqual([expect.objectContaining({ url, events: ['created', 'deleted'] })]);

    await page.getByRole('link', { name: `Deliveries of ${url}` }).click();
    await page.getByRole('heading', { name: 'Deliveries' }).waitFor();
    await page.getByText('No deliveries yet').waitFor();
    expect(await seriousA11yViolations(page)).toEqual([]);
    expect(errors).toEqual([]);
  });

  it('exports a namespace to a file and imports it into another user', async () => {
    const source = await createUser(h.t);
    const target = await createUser(h.t);
    for (const n of [1, 2, 3]) {
      const made = await callApi(h.base, source.apiKey, 'POST', '/data/orders', {
        item: { _id: `order-${n}`, n, note: `<b>${n}</b>` },
      });
      expect(made.status).toBe(200);
    }
    const uploaded = await fetch(`${h.base}/files?name=readme.txt`, {
      method: 'POST',
      headers: { 'X-Api-Key': source.apiKey, 'Content-Type': 'text/plain' },
      body: 'the bytes travel too',
    });
    expect(uploaded.status).toBe(201);
    const file = (await uploaded.json()) as { id: string; sha256: string };

    const exporting = await openAt(source.apiKey, '/transfer');
    await exporting.page.getByRole('button', { name: 'Export', exact: true }).click();
    await status(exporting.page, '7 lines received, 3 items, 1 files');
    const [download] = await Promise.all([
      exporting.page.waitForEvent('download'),
      exporting.page.getByRole('link', { name: /^Save the export \(3 items/ }).click(),
    ]);
    const content = await readFile(await download.path(), 'utf8');
    // Once saved, the link (and its object URL) is gone.
    await status(exporting.page, 'handed to the browser');
    expect(await exporting.page.getByRole('link', { name: /^Save the export/ }).count()).toBe(0);
    const records = content
      .trimEnd()
      .split('\n')
      .map((line) => JSON.parse(line));
    const kinds = records.map((record) => record.type).join(' ');
    expect(kinds).toBe('manifest item item item file file-chunk end');
    const ids = records.filter((r) => r.type === 'item').map((r) => r.item._id);
    expect(ids).toEqual(['order-1', 'order-2', 'order-3']);
    expect(records[6]).toMatchObject({ type: 'end', items: 5, files: 1 });
    expect(exporting.errors).toEqual([]);

    const importing = await openAt(target.apiKey, '/transfer');
    await importing.page.getByLabel('NDJSON file').setInputFiles({
      name: 'orders.ndjson',
      mimeType: 'application/x-ndjson',
      buffer: Buffer.from(content),
    });
    await importing.page.getByRole('button', { name: 'Import', exact: true }).click();
    const totals = importing.page.getByLabel('Import totals');
    await totals.waitFor();
    expect(await totals.textContent()).toContain('7 lines, 4 created, 0 replaced, 0 failed');
    await status(importing.page, '7 result lines so far');
    const files = (await callApi(h.base, target.apiKey, 'GET', '/files')).body as {
      id: string;
      sha256: string;
      name: string;
    }[];
    expect(files.map(({ id, sha256, name }) => ({ id, sha256, name }))).toEqual([
      { id: file.id, sha256: file.sha256, name: 'readme.txt' },
    ]);

    const query = '/data/orders?sort=_id&sortOrder=asc';
    const items = (await callApi(h.base, target.apiKey, 'GET', query)).body as ImportedItem[];
    expect(items.map((item) => `${item._id} ${item.note}`)).toEqual(
      [1, 2, 3].map((n) => `order-${n} <b>${n}</b>`),
    );
    expect(importing.errors).toEqual([]);
  });

  describe('has no serious accessibility violations', () => {
    let user: TestUser;
    beforeAll(async () => {
      user = await createUser(h.t);
      await callApi(h.base, user.apiKey, 'POST', '/data/notes', { item: { _id: 'a', text: 'x' } });
    });

    // [route, its heading, signed in as the operator]
    const views: [string, string, boolean][] = [
      ['/transfer', 'Export / import', false],
      ['/files', 'Files', false],
      ['/webhooks', 'Webhooks', false],
      ['/keys', 'API keys', false],
      ['/admin/users', 'Users', true],
      ['/admin/erasures', 'Erasures', true],
      ['/admin/teams', 'Teams', true],
      ['/admin/clusters', 'Clusters', true],
      ['/admin/moves', 'Tenant moves', true],
    ];
    it.each(views)('view %s', async (route, heading, operator) => {
      const { page, errors } = await openAt(operator ? TEST_ADMIN_KEY : user.apiKey, route);
      await page.getByRole('heading', { level: 1, name: heading }).waitFor();
      await page.getByRole('status').filter({ hasText: 'Loading' }).waitFor({ state: 'detached' });
      expect(await seriousA11yViolations(page)).toEqual([]);
      expect(errors).toEqual([]);
    });

    it('operator views of a user and an erasure', async () => {
      const doomed = await createUser(h.t);
      const route = `/admin/users/${encodeURIComponent(doomed.subject)}`;
      const { page, errors } = await openAt(TEST_ADMIN_KEY, route);
      await page.getByRole('button', { name: 'Erase user' }).waitFor();
      expect(await seriousA11yViolations(page)).toEqual([]);
      await page.getByRole('button', { name: 'Erase user' }).click();
      expect(await seriousA11yViolations(page)).toEqual([]);
      await page.getByRole('dialog').getByRole('button', { name: 'Erase user' }).click();
      await status(page, 'Status: finished');
      expect(await seriousA11yViolations(page)).toEqual([]);
      expect(errors).toEqual([]);
    });

    it('the files view with a file open, at 390×844', async () => {
      const { page, errors } = await openAt(user.apiKey, '/files', { width: 390, height: 844 });
      await upload(page, 'small.png', 'image/png', PNG);
      await page.getByRole('button', { name: 'Open small.png' }).click();
      await page.getByRole('img', { name: 'Preview of small.png' }).waitFor();
      expect(await seriousA11yViolations(page)).toEqual([]);
      const root = 'document.documentElement';
      expect(await page.evaluate(`${root}.scrollWidth - ${root}.clientWidth`)).toBe(0);
      expect(errors).toEqual([]);
    });
  });
});
