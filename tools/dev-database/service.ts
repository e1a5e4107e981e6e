import 'reflect-metadata';
import { existsSync } from 'node:fs';
import { join, resolve } from 'node:path';
import type { DatabaseSettings, ResolvedDatabase } from './database-resolver';
import { readDevDatabaseSettings } from './settings';

/** The service as `nest build` compiled it. This file runs from dist-dev/tools/dev-database/. */
const SERVICE_DIST = resolve(__dirname, '..', '..', '..', 'dist');

/**
 * What this tool calls in dist/ (sources: src/config, src/main.ts). The build is loaded by path
 * rather than imported, so that this tool is compiled on its own and drives exactly the build
 * that production runs; service.spec.ts checks these shapes against the sources.
 */
export interface BuiltConfig {
  loadConfig: (env: NodeJS.ProcessEnv) => { database: { uri?: string } };
}

/** Called by the service once its configuration is valid, with MONGODB_URI as it read it. */
export type DatabaseStarter = (
  uri: string | undefined,
  log: (message: string) => void,
) => Promise<ResolvedDatabase>;

export interface BuiltMain {
  bootstrap: (startDatabase: DatabaseStarter) => Promise<void>;
}

async function loadBuilt<T>(file: string): Promise<T> {
  if (!existsSync(`${file}.js`)) {
    throw new Error(`${file}.js is missing: run \`npm run build\` first`);
  }
  return (await import(file)) as T;
}

/** dist/main.js, or the entry file given (as `nest start --exec` passes it). */
export function loadBuiltMain(entry = join(SERVICE_DIST, 'main')): Promise<BuiltMain> {
  return loadBuilt<BuiltMain>(resolve(entry).replace(/\.js$/, ''));
}

/**
 * The database settings for the tools that do not boot the service (CI preparation, benchmarks):
 * this tool's own, and MONGODB_URI as the service's configuration reads it from `env`. NODE_ENV is
 * test as in the e2e tests: production would require MONGODB_URI and ADMIN_API_KEY.
 */
export async function loadDatabaseSettings(
  env: NodeJS.ProcessEnv = process.env,
): Promise<DatabaseSettings> {
  const settings = readDevDatabaseSettings(env);
  const { loadConfig } = await loadBuilt<BuiltConfig>(join(SERVICE_DIST, 'config', 'index'));
  return { ...settings, uri: loadConfig({ ...env, NODE_ENV: 'test' }).database.uri };
}
