import type { LoggerService } from '@nestjs/common';
import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { hostname } from 'node:os';
import { join } from 'node:path';
import pino, { type Level, type Logger, type LoggerOptions } from 'pino';
import pretty from 'pino-pretty';
import type { AppConfig } from '../../config';
import { activeTraceId } from './trace-id';

const REQUEST_ID_PATTERN = /^[A-Za-z0-9._:-]{1,128}$/;

type WithId = IncomingMessage & { id?: unknown; traceId?: string };

/**
 * Echoes a well-formed X-Request-Id, otherwise generates one; either way it is sent back.
 * Runs first (see configureApp) so that even body-parser errors carry the id as traceId. With
 * tracing on it also keeps the request's trace id (the HTTP server span is active here), which
 * then is the traceId of problems and log lines instead.
 */
export function requestIdOf(req: WithId, res: ServerResponse): string {
  if (typeof req.id === 'string') return req.id;
  const header = req.headers['x-request-id'];
  const id = typeof header === 'string' && REQUEST_ID_PATTERN.test(header) ? header : randomUUID();
  res.setHeader('X-Request-Id', id);
  req.id = id;
  const traceId = activeTraceId();
  if (traceId) req.traceId = traceId;
  return id;
}

/**
 * Name and version from package.json, read at run time: this file sits three levels below the
 * root both in src/ and in dist/, and the Docker image ships package.json beside dist/.
 */
function readServiceIdentity(): { service: string; version: string } {
  try {
    const pkg = JSON.parse(
      readFileSync(join(__dirname, '..', '..', '..', 'package.json'), 'utf8'),
    ) as { name?: unknown; version?: unknown };
    return {
      service: typeof pkg.name === 'string' ? pkg.name : 'unknown',
      version: typeof pkg.version === 'string' ? pkg.version : 'unknown',
    };
  } catch {
    return { service: 'unknown', version: 'unknown' };
  }
}

export const SERVICE_IDENTITY = readServiceIdentity();

type LoggerConfig = Pick<AppConfig, 'logLevel'> & Partial<Pick<AppConfig, 'nodeEnv'>>;

/**
 * One JSON object per line, for log collectors: level as its name (`"level":"info"`), ISO time,
 * and which service and version wrote it.
 */
export function loggerOptions(config: LoggerConfig): LoggerOptions {
  return {
    level: config.logLevel,
    base: { pid: process.pid, hostname: hostname(), ...SERVICE_IDENTITY },
    timestamp: pino.stdTimeFunctions.isoTime,
    formatters: { level: (label) => ({ level: label }) },
  };
}

/**
 * The process's logger: JSON lines, or in development human-readable lines (pino-pretty, written
 * synchronously so they stay in order with the start banner). Request lines carry no headers, so
 * API keys never reach the log.
 */
export function createLogger(config: LoggerConfig): Logger {
  const options = loggerOptions(config);
  if (config.nodeEnv !== 'development') return pino(options);
  return pino(
    options,
    pretty({
      sync: true,
      translateTime: 'SYS:HH:MM:ss.l',
      ignore: 'pid,hostname,service,version',
    }),
  );
}

/**
 * Nest's wiring lines (one per module and per route, some 50 at start) are for debugging the
 * framework, not for operating the service: at 'log' level they would bury the start banner.
 */
const WIRING_CONTEXTS = new Set(['InstanceLoader', 'RoutesResolver', 'RouterExplorer']);

/**
 * Nest's logger interface over pino, so framework and application logs are the same JSON lines.
 * (A direct adapter rather than nestjs-pino: its per-request AsyncLocalStorage context cost
 * 10–20 % of throughput in the benchmarks, and every error log here carries its traceId itself.)
 */
export class PinoLoggerService implements LoggerService {
  constructor(private readonly logger: Logger) {}

  log(message: unknown, ...params: unknown[]): void {
    const context = params.at(-1);
    const wiring = typeof context === 'string' && WIRING_CONTEXTS.has(context);
    this.write(wiring ? 'debug' : 'info', message, params);
  }

  error(message: unknown, ...params: unknown[]): void {
    this.write('error', message, params);
  }

  warn(message: unknown, ...params: unknown[]): void {
    this.write('warn', message, params);
  }

  debug(message: unknown, ...params: unknown[]): void {
    this.write('debug', message, params);
  }

  verbose(message: unknown, ...params: unknown[]): void {
    this.write('trace', message, params);
  }

  fatal(message: unknown, ...params: unknown[]): void {
    this.write('fatal', message, params);
  }

  /** Nest appends the logger's context as the last parameter; `(object, message)` is pino's form. */
  private write(level: Level, message: unknown, params: unknown[]): void {
    if (!this.logger.isLevelEnabled(level)) return;
    const rest = params.filter((p) => p !== undefined);
    const context = typeof rest.at(-1) === 'string' ? (rest.pop() as string) : undefined;
    if (message instanceof Error) {
      this.logger[level]({ context, err: message }, message.message);
    } else if (typeof message === 'object' && message !== null) {
      const text = typeof rest[0] === 'string' ? (rest.shift() as string) : undefined;
      this.logger[level]({ context, ...message }, text);
    } else {
      this.logger[level](
        { context, ...(rest.length > 0 ? { details: rest } : {}) },
        String(message),
      );
    }
  }
}
