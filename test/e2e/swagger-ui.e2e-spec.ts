import { existsSync, mkdirSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import type { OpenAPIV3 } from 'openapi-types';
import { chromium, type Browser, type Page } from 'playwright-core';
import { createTestApp, type TestApp } from '../support/app';
import { createUser, type TestUser } from '../support/factories';

/**
 * Swagger UI as people see it: the page in a real browser (Debian's Chromium driven by
 * playwright-core; `.ci/run` installs it, CHROMIUM_PATH points at another build). The contract
 * tests read /docs-json only, which stayed valid while the page itself was blank.
 */
const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
/** Where the page's screenshot is left for a person to look at (not committed). */
const SCREENSHOT_DIR = join(__dirname, '..', '..', '.data', 'screenshots');

const METHODS = ['get', 'put', 'post', 'delete', 'patch', 'head', 'options'] as const;

let t: TestApp;
let user: TestUser;
let browser: Browser;
let base: string;
let document: OpenAPIV3.Document;

beforeAll(async () => {
  if (!existsSync(CHROMIUM)) {
    throw new Error(
      `no Chromium at ${CHROMIUM}: install Debian's package (apt-get install chromium) or set CHROMIUM_PATH`,
    );
  }
  t = await createTestApp(__filename);
  user = await createUser(t);
  await t.app.listen(0, '127.0.0.1');
  const { port } = t.app.getHttpServer().address() as AddressInfo;
  base = `http://127.0.0.1:${port}`;
  document = (await t.http().get('/docs-json').expect(200)).body as OpenAPIV3.Document;
  // --no-sandbox: CI runs as root, where Chromium's sandbox refuses to start.
  browser = await chromium.launch({ executablePath: CHROMIUM, args: ['--no-sandbox'] });
});

afterAll(async () => {
  await browser?.close();
  await t?.close();
});

/** Opens a page that records every script error and console error it meets. */
async function open(path: string): Promise<{ page: Page; errors: string[] }> {
  const page = await browser.newPage({ viewport: { width: 1280, height: 800 } });
  const errors: string[] = [];
  page.on('pageerror', (error) => errors.push(`pageerror: ${error.message}`));
  page.on('console', (message) => {
    if (message.type() === 'error') errors.push(`console: ${message.text()}`);
  });
  await page.goto(`${base}${path}`);
  await page.locator('.opblock').first().waitFor({ timeout: 30_000 });
  return { page, errors };
}

/** "TAG METHOD /path" for every operation the document lists, under each of its tags. */
function documentedOperations(): string[] {
  const listed: string[] = [];
  for (const [path, item] of Object.entries(document.paths)) {
    for (const method of METHODS) {
      const operation = item?.[method];
      if (!operation) continue;
      for (const tag of operation.tags?.length ? operation.tags : ['default']) {
        listed.push(`${tag} ${method.toUpperCase()} ${path}`);
      }
    }
  }
  return listed.sort();
}

/** The same, as the page renders it. */
async function renderedOperations(page: Page): Promise<string[]> {
  const rendered = await page.$$eval('.opblock-tag-section', (sections) =>
    sections.flatMap((section) => {
      const tag = section.querySelector('.opblock-tag')?.getAttribute('data-tag') ?? '?';
      return [...section.querySelectorAll('.opblock')].map((block) => {
        const method = block.querySelector('.opblock-summary-method')?.textContent ?? '?';
        const path = block.querySelector('.opblock-summary-path')?.getAttribute('data-path');
        return `${tag} ${method.toUpperCase()} ${path ?? '?'}`;
      });
    }),
  );
  return rendered.sort();
}

it('renders every tag and operation of the served document, with no script error', async () => {
  const { page, errors } = await open('/docs');
  const expected = documentedOperations();
  expect(expected.length).toBeGreaterThan(50);
  expect(await renderedOperations(page)).toEqual(expected);
  const tags = await page.$$eval('.opblock-tag', (els) =>
    els.map((e) => e.getAttribute('data-tag')),
  );
  expect(new Set(tags)).toEqual(new Set(expected.map((line) => line.split(' ')[0])));
  expect(await page.locator('.info .title').textContent()).toContain(document.info.title);
  mkdirSync(SCREENSHOT_DIR, { recursive: true });
  await page.screenshot({ path: join(SCREENSHOT_DIR, 'docs.png') });
  expect(errors).toEqual([]);
  await page.close();
});

it('serves the same page at /docs/ and loads its assets from there', async () => {
  const { page, errors } = await open('/docs/');
  expect((await renderedOperations(page)).length).toBe(documentedOperations().length);
  expect(errors).toEqual([]);
  await page.close();
});

it('authorizes with an API key and runs a request from the page', async () => {
  const { page, errors } = await open('/docs');
  await page.locator('.auth-wrapper .authorize').click();
  const dialog = page.locator('.modal-ux');
  await dialog.waitFor({ state: 'visible' });
  // The X-Api-Key scheme's form is the one with a text input named after the header.
  const form = dialog.locator('.auth-container', { hasText: 'X-Api-Key' });
  await form.locator('input[type="text"], input[type="password"]').fill(user.apiKey);
  await form.locator('button.authorize').click();
  await form.locator('button', { hasText: 'Logout' }).waitFor({ state: 'visible' });
  await form.locator('button.btn-done').click();

  const me = page.locator('.opblock-get', {
    has: page.locator('.opblock-summary-path[data-path="/me"]'),
  });
  await me.locator('.opblock-summary-control').click();
  await me.getByRole('button', { name: 'Try it out' }).click();
  const answered = page.waitForResponse((res) => res.url() === `${base}/me`);
  await me.getByRole('button', { name: 'Execute' }).click();
  const response = await answered;
  expect(response.status()).toBe(200);
  expect(response.request().headers()['x-api-key']).toBe(user.apiKey);
  // The page shows the live response: its status and the caller's own subject.
  const live = me.locator('.live-responses-table');
  await live.waitFor({ state: 'visible' });
  expect((await live.locator('tr.response .response-col_status').textContent())?.trim()).toBe(
    '200',
  );
  expect(await live.locator('tr.response .response-col_description').textContent()).toContain(
    user.subject,
  );
  await me.scrollIntoViewIfNeeded();
  await page.screenshot({ path: join(SCREENSHOT_DIR, 'docs-try-it-out.png') });
  expect(errors).toEqual([]);
  await page.close();
});
