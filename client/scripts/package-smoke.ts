// `npm run test:client-package` (CI): the client as an app gets it. `npm pack` makes the tarball;
// a scratch project outside the repository (a new temporary directory, nothing of the repository
// on its PATH or NODE_PATH, no node_modules above it) installs it from the tarball with
// typescript and openapi-typescript from the registry; then, against dist/main.js on a fresh
// database: the package's `profile-data-client-types` command writes types of a collection, a
// strict TypeScript app (client/smoke/flow.ts, todos.ts) compiles with moduleResolution node16
// and bundler and runs, and a plain ES-module script and a CommonJS script run their flows.
import { spawn } from 'node:child_process';
import { copyFileSync, existsSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { delimiter, dirname, join, relative, sep } from 'node:path';
import { createApiClient, unwrap } from '../src';
import { describeFailure, ROOT, withService, type RunningService } from './service';

const CLIENT = join(ROOT, 'client');
const SMOKE = join(CLIENT, 'smoke');
/** What the app installs beside the package (typescript as the repository's own). */
const APP_DEPENDENCIES = ['typescript@~5.9.2', 'openapi-typescript@^7.13.0'];

const started = Date.now();
const log = (message: string): void =>
  void process.stdout.write(`[${((Date.now() - started) / 1000).toFixed(1)} s] ${message}\n`);

/**
 * The environment of the app's commands: this one without NODE_PATH, without what `npm run`
 * adds (npm_* variables, which would point npm at the repository) and without the PATH entries
 * inside the repository (its node_modules/.bin).
 */
function appEnvironment(extra: Record<string, string>): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [name, value] of Object.entries(process.env)) {
    if (name === 'NODE_PATH' || name.toLowerCase().startsWith('npm_')) continue;
    env[name] = value;
  }
  env.PATH = (process.env.PATH ?? '')
    .split(delimiter)
    .filter((entry) => entry !== ROOT && !entry.startsWith(ROOT + sep))
    .join(delimiter);
  return { ...env, ...extra };
}

/** Runs a command to its end; its output is shown only when it fails. */
function run(
  command: string,
  args: string[],
  cwd: string,
  env: NodeJS.ProcessEnv = appEnvironment({}),
): Promise<string> {
  return new Promise((done, fail) => {
    const child = spawn(command, args, { cwd, env, stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString('utf8')));
    child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString('utf8')));
    child.on('error', fail);
    child.on('close', (code) => {
      if (code === 0) done(output);
      else fail(new Error(`${command} ${args.join(' ')} (in ${cwd}) exited ${code}:\n${output}`));
    });
  });
}

/** No node_modules above the scratch project could lend it a module the tarball lacks. */
function assertIsolated(dir: string): void {
  if (!relative(ROOT, dir).startsWith('..')) throw new Error(`${dir} is inside the repository`);
  for (let up = dirname(dir); ; up = dirname(up)) {
    if (existsSync(join(up, 'node_modules')))
      throw new Error(`${join(up, 'node_modules')} is above the scratch project`);
    if (dirname(up) === up) return;
  }
}

/** The tarball `npm pack` makes of client/ (its builds, package.json and README only). */
async function pack(into: string): Promise<string> {
  await run('npm', ['pack', '--silent', '--pack-destination', into], CLIENT);
  const [tarball, ...more] = readdirSync(into).filter((name) => name.endsWith('.tgz'));
  if (!tarball || more.length > 0) throw new Error(`npm pack left ${readdirSync(into).join(', ')}`);
  return join(into, tarball);
}

/** A new app with the tarball, typescript and openapi-typescript installed, and the flows. */
async function scratchApp(tarball: string): Promise<string> {
  const app = mkdtempSync(join(tmpdir(), 'pds-client-app-'));
  assertIsolated(app);
  writeFileSync(
    join(app, 'package.json'),
    `${JSON.stringify({ name: 'scratch-app', private: true, type: 'module' }, null, 2)}\n`,
  );
  for (const file of readdirSync(SMOKE)) copyFileSync(join(SMOKE, file), join(app, file));
  await run('npm', ['install', '--no-audit', '--no-fund', tarball, ...APP_DEPENDENCIES], app);
  return app;
}

/** A user of the operator's making, with a `todos` collection whose schema types its items. */
async function userWithTodos(service: RunningService): Promise<string> {
  const operator = createApiClient({ baseUrl: service.baseUrl, apiKey: service.adminKey });
  const { apiKey } = await unwrap(
    operator.POST('/admin/users', { body: { email: 'types@example.com' } }),
  );
  const api = createApiClient({ baseUrl: service.baseUrl, apiKey });
  const todos = { params: { path: { collection: 'todos' } } };
  await unwrap(api.POST('/data/{collection}', { ...todos, body: { item: { title: 'first' } } }));
  await unwrap(
    api.PUT('/data/{collection}/schema', {
      ...todos,
      body: {
        schema: { type: 'object', properties: { title: { type: 'string' } }, required: ['title'] },
        action: 'error',
      },
    }),
  );
  return apiKey;
}

/** The app's commands against the service, in the order an app's developer would run them. */
async function flows(app: string, service: RunningService): Promise<void> {
  const env = appEnvironment({ PDS_BASE_URL: service.baseUrl, PDS_ADMIN_KEY: service.adminKey });
  const apiKey = await userWithTodos(service);
  // `--no`: only the installed command, never one npx would download; `--`: what follows is the
  // command's, not npx's.
  const types = ['profile-data-client-types', '--url', service.baseUrl, '--out', 'collections.ts'];
  const typed = await run('npx', ['--no', '--', ...types], app, { ...env, PDS_API_KEY: apiKey });
  log(typed.trim());
  await run('npx', ['--no', '--', 'tsc', '-p', 'tsconfig.node16.json'], app, env);
  await run('npx', ['--no', '--', 'tsc', '-p', 'tsconfig.bundler.json'], app, env);
  log('TypeScript: flow.ts and todos.ts compile strictly with node16 and bundler resolution');
  for (const script of ['out/flow.js', 'flow.mjs', 'flow.cjs'])
    log((await run(process.execPath, [script], app, env)).trim());
}

async function smoke(): Promise<void> {
  const packDir = mkdtempSync(join(tmpdir(), 'pds-client-pack-'));
  // The app is made while the service starts: each mostly waits (on the registry, the database).
  const made = pack(packDir).then(async (tarball) => {
    log(`packed ${tarball}`);
    const app = await scratchApp(tarball);
    log(`installed it in ${app} with ${APP_DEPENDENCIES.join(', ')}`);
    return app;
  });
  made.catch(() => undefined); // awaited below; a service that fails to start comes first
  let app: string | undefined;
  try {
    await withService(log, async (service) => {
      app = await made;
      await flows(app, service);
    });
    if (app) rmSync(app, { recursive: true, force: true });
    log('the packed client works from a scratch app: TypeScript, ES module and CommonJS');
  } catch (error) {
    if (app) process.stderr.write(`the scratch app is kept for a look: ${app}\n`);
    throw error;
  } finally {
    rmSync(packDir, { recursive: true, force: true });
  }
}

smoke().catch((error: unknown) => {
  process.stderr.write(`${describeFailure(error)}\n`);
  process.exit(1);
});
