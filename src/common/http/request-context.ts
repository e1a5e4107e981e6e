import type { IncomingMessage, ServerResponse } from 'node:http';
import { performance } from 'node:perf_hooks';
import type { Level, Logger } from 'pino';
import { requestIdOf } from './logger';

/**
 * Something that watches requests: told when one arrives, it answers what to call once the
 * connection is done with it (`finished`: the response was sent in full; else the client went
 * away first), or nothing when the request is none of its business.
 */
export type RequestObserver = (
  req: IncomingMessage,
  res: ServerResponse,
) => ((ms: number, finished: boolean) => void) | undefined;

/**
 * Swagger UI's page and static assets, and the console's: the same for everyone, so caches may
 * keep them (the console sets its own Cache-Control).
 */
const STATIC_UI_PATH = /^\/(docs|console)([/?]|$)/;

/**
 * The first middleware of every request, in one step rather than a middleware each (Express
 * pays for each one it passes a request through): the request id (X-Request-Id), then
 * `Cache-Control: no-store` on every response but the Swagger UI and console pages — API
 * responses, errors included, carry tenant data or key material that no browser or shared cache
 * may keep (the OpenAPI document at /docs-json is an API response like the others; a handler can
 * still replace the header or add an ETag) — then one `close` listener for all the observers
 * (metrics, the request log), so that every answer is timed and counted, those refused before
 * routing included.
 */
export function requestContext(observers: RequestObserver[]) {
  return (req: IncomingMessage, res: ServerResponse, next: () => void): void => {
    requestIdOf(req, res);
    if (!STATIC_UI_PATH.test(req.url ?? '')) res.setHeader('Cache-Control', 'no-store');
    const started = performance.now();
    const done: ((ms: number, finished: boolean) => void)[] = [];
    for (const observe of observers) {
      const then = observe(req, res);
      if (then) done.push(then);
    }
    if (done.length > 0)
      res.once('close', () => {
        const ms = performance.now() - started;
        for (const then of done) then(ms, res.writableFinished);
      });
    next();
  };
}

/**
 * One log line per finished request (id, method, url, status, duration); 4xx as warn, 5xx as
 * error, the rest as info; health probes are left out. Written here rather than with pino-http,
 * whose per-request child logger cost about 15 % of POST throughput in the benchmarks even when
 * the level filtered the line out.
 */
export function requestLog(logger: Logger): RequestObserver {
  return (req, res) => {
    const url = req.url ?? '';
    if (url.startsWith('/health')) return undefined;
    return (ms, finished) => {
      if (!finished) return;
      const status = res.statusCode;
      const level: Level = status >= 500 ? 'error' : status >= 400 ? 'warn' : 'info';
      if (!logger.isLevelEnabled(level)) return;
      const { id, traceId } = req as IncomingMessage & { id?: unknown; traceId?: string };
      logger[level](
        {
          req: { id, method: req.method, url },
          res: { statusCode: status },
          responseTime: ms,
          ...(traceId ? { traceId } : {}),
        },
        'request completed',
      );
    };
  };
}
