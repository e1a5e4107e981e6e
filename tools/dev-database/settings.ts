import 'reflect-metadata';
import { homedir } from 'node:os';
import { join, resolve } from 'node:path';
import { plainToInstance } from 'class-transformer';
import { IsEnum, IsOptional, IsString, Matches, validateSync } from 'class-validator';

/**
 * The development database's own variables, with their defaults. The service does not read them:
 * `npm start`, the tests, CI's preparation and the benchmarks do, through this file.
 * `.env.example` lists them under a heading of their own; keep the two in step.
 */
export class DevDatabaseVariables {
  /** Where embedded databases keep their files (relative to the working directory). */
  @IsString()
  DATA_DIR = '.data';

  /** Where a FerretDB binary built with `go install` is cached between runs. */
  @IsOptional()
  @IsString()
  CACHE_DIR?: string;

  @IsEnum({ auto: 'auto', 'mongodb-memory-server': 'mongodb-memory-server', ferretdb: 'ferretdb' })
  EMBEDDED_DB: 'auto' | 'mongodb-memory-server' | 'ferretdb' = 'auto';

  @Matches(/^v1\.\d+\.\d+$/, { message: 'FERRETDB_VERSION must look like v1.24.2' })
  FERRETDB_VERSION = 'v1.24.2';

  @IsOptional()
  @IsString()
  FERRETDB_BIN?: string;
}

export type EmbeddedPreference = DevDatabaseVariables['EMBEDDED_DB'];

/** How a development database is found or started, as read from the environment. */
export interface DevDatabaseSettings {
  /** Persistent data root; the memory server uses `<dataDir>/mongodb`, FerretDB `<dataDir>/ferretdb`. */
  dataDir: string;
  /** Where the built FerretDB binary is cached. */
  cacheDir: string;
  /** e.g. 'v1.24.2' */
  ferretdbVersion: string;
  /** Path to an already-built ferretdb binary; skips the build. */
  ferretdbBin?: string;
  /** 'auto' = memory server first, then FerretDB. */
  embedded: EmbeddedPreference;
}

export class DevDatabaseSettingsError extends Error {
  constructor(readonly problems: string[]) {
    super(`Invalid development database settings:\n${problems.map((p) => `  - ${p}`).join('\n')}`);
    this.name = 'DevDatabaseSettingsError';
  }
}

/**
 * Reads and validates the development database's variables from `env` (empty values count as
 * unset, as for the service). Every problem is reported together.
 */
export function readDevDatabaseSettings(env: NodeJS.ProcessEnv = process.env): DevDatabaseSettings {
  const present = Object.fromEntries(
    Object.entries(env).filter(([, v]) => v !== undefined && v !== ''),
  );
  const vars = plainToInstance(DevDatabaseVariables, present, { excludeExtraneousValues: false });
  const problems = validateSync(vars, {
    forbidUnknownValues: false,
    stopAtFirstError: true,
  }).flatMap((e) =>
    Object.values(e.constraints ?? {}).map((message) =>
      message.startsWith(e.property) ? message : `${e.property}: ${message}`,
    ),
  );
  if (problems.length > 0) throw new DevDatabaseSettingsError(problems);
  return {
    dataDir: resolve(vars.DATA_DIR),
    cacheDir: resolve(
      vars.CACHE_DIR ??
        join(env.XDG_CACHE_HOME ?? join(homedir(), '.cache'), 'profile-data-service'),
    ),
    embedded: vars.EMBEDDED_DB,
    ferretdbVersion: vars.FERRETDB_VERSION,
    ferretdbBin: vars.FERRETDB_BIN,
  };
}

/** Loads `.env` from the working directory if there is one (values already set win), as the service does. */
export function loadDotEnvFile(path = '.env'): void {
  try {
    process.loadEnvFile(path);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
  }
}
