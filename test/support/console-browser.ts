import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync, statSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { chromium, type Browser, type Page } from 'playwright-core';
import { createTestApp, type TestApp } from './app';
import { newestMtime } from './service-process';

/**
 * The console in a real browser: Debian's Chromium (CHROMIUM_PATH for another build) driven by
 * playwright-core, against the application with the console as `npm run build` makes it
 * (dist/console, rebuilt here when console/ or client/ changed since).
 */
export const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';

const ROOT = join(__dirname, '..', '..');
const CONSOLE_INDEX = join(ROOT, 'dist', 'console', 'index.html');

/** Builds dist/console when it is missing or older than its sources. */
export function ensureConsoleBuilt(): void {
  const every = () => true;
  const built = existsSync(CONSOLE_INDEX) ? statSync(CONSOLE_INDEX).mtimeMs : 0;
  const sources = Math.max(
    newestMtime(join(ROOT, 'console'), every),
    newestMtime(join(ROOT, 'client', 'src')),
    statSync(join(ROOT, 'client', 'package.json')).mtimeMs,
  );
  if (built >= sources) return;
  // A production build, as `npm run build` makes it (jest runs with NODE_ENV=test, for which
  // React's development build would be bundled).
  execFileSync('npm', ['run', '--silent', 'build:console'], {
    cwd: ROOT,
    stdio: 'ignore',
    timeout: 180_000,
    env: { ...process.env, NODE_ENV: 'production' },
  });
}

/** Chromium as the tests run it: headless, no network of its own, a fresh profile. */
export async function launchChromium(): Promise<Browser> {
  if (!existsSync(CHROMIUM))
    throw new Error(
      `no Chromium at ${CHROMIUM}: install Debian's package (apt-get install chromium) or set CHROMIUM_PATH`,
    );
  // --no-sandbox: CI runs as root, where Chromium's sandbox refuses to start. The others keep it
  // from reaching out to Google's services, which a closed network refuses.
  return chromium.launch({
    executablePath: CHROMIUM,
    args: [
      '--no-sandbox',
      '--disable-gpu',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
      '--no-first-run',
    ],
  });
}

export interface ConsolePage {
  page: Page;
  /** Script errors, console errors and CSP violations the page met: a test expects none. */
  errors: string[];
}

export interface ConsoleHarness {
  t: TestApp;
  browser: Browser;
  /** http://127.0.0.1:<port>: the API; the console is at `${base}/console/`. */
  base: string;
  /** A new page (its own storage: a new browser context) at the console, not signed in. */
  open(viewport?: { width: number; height: number }): Promise<ConsolePage>;
  close(): Promise<void>;
}

/** Starts the application (its own database) with the console, and Chromium. */
export async function startConsole(
  testFile: string,
  env: Record<string, string> = {},
): Promise<ConsoleHarness> {
  ensureConsoleBuilt();
  const t = await createTestApp(testFile, env);
  await t.app.listen(0, '127.0.0.1');
  const { port } = t.app.getHttpServer().address() as AddressInfo;
  const base = `http://127.0.0.1:${port}`;
  const browser = await launchChromium();
  return {
    t,
    browser,
    base,
    open: async (viewport = { width: 1280, height: 800 }) => {
      const context = await browser.newContext({ viewport });
      const page = await context.newPage();
      const errors: string[] = [];
      page.on('pageerror', (error) => errors.push(`pageerror: ${error.message}`));
      page.on('console', (message) => {
        if (message.type() === 'error') errors.push(`console: ${message.text()}`);
      });
      page.on('dialog', (dialog) => {
        errors.push(`dialog: ${dialog.message()}`);
        void dialog.dismiss();
      });
      await page.goto(`${base}/console/`);
      return { page, errors };
    },
    close: async () => {
      await browser.close();
      await t.close();
    },
  };
}

/** Signs in with `apiKey` on the sign-in form and waits for the console's navigation. */
export async function signIn(page: Page, apiKey: string): Promise<void> {
  await page.getByLabel('API key', { exact: true }).fill(apiKey);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.getByRole('navigation', { name: 'Views' }).waitFor();
}

/** Goes to a console route (`/data/orders`) by its fragment, as a link would. */
export async function go(page: Page, route: string): Promise<void> {
  await page.evaluate(`window.location.hash = ${JSON.stringify(route)}`);
}

const AXE_SOURCE = readFileSync(require.resolve('axe-core/axe.min.js'), 'utf8');

export interface AxeViolation {
  id: string;
  impact: string | null;
  help: string;
  targets: string[];
}

/**
 * axe-core's check of the page as it is now: the serious and critical violations (an empty list
 * passes). axe is evaluated through the DevTools protocol, which the page's
 * Content-Security-Policy does not apply to, so the policy stays as users get it.
 */
export async function seriousA11yViolations(page: Page): Promise<AxeViolation[]> {
  const loaded = await page.evaluate('typeof window.axe === "object"');
  if (!loaded) await page.evaluate(AXE_SOURCE);
  // A string, evaluated in the page: this project's test code is compiled without the DOM's types.
  const violations = await page.evaluate<AxeViolation[]>(`window.axe
    .run(document, { resultTypes: ['violations'] })
    .then((result) => result.violations.map((v) => ({
      id: v.id,
      impact: v.impact,
      help: v.help,
      targets: v.nodes.map((n) => JSON.stringify(n.target)),
    })))`);
  return violations.filter((v) => v.impact === 'serious' || v.impact === 'critical');
}

/** Calls the API as a client would (beside the browser): status and parsed body. */
/** Longer than any answer takes on a loaded machine; a request past it is hung. */
const API_CALL_MAX_MS = 60_000;

export async function callApi(
  base: string,
  apiKey: string,
  method: string,
  path: string,
  body?: unknown,
  headers: Record<string, string> = {},
): Promise<{ status: number; body: unknown; headers: Headers }> {
  // Bounded, so a request the service never answers fails naming itself, not the test's timeout.
  const signal = AbortSignal.timeout(API_CALL_MAX_MS);
  const named = (error: unknown) =>
    Promise.reject(new Error(`${method} ${path}: ${(error as Error).message}`));
  const res = await fetch(`${base}${path}`, {
    method,
    signal,
    headers: {
      'X-Api-Key': apiKey,
      ...(body !== undefined ? { 'Content-Type': 'application/json' } : {}),
      ...headers,
    },
    ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
  }).catch(named);
  const text = await res.text().catch(named);
  let parsed: unknown = text;
  try {
    parsed = text === '' ? undefined : JSON.parse(text);
  } catch {
    // not JSON: the text itself
  }
  return { status: res.status, body: parsed, headers: res.headers };
}
