import { randomUUID } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Params } from 'nestjs-pino';
import type { AppConfig } from '../../config';

const REQUEST_ID_PATTERN = /^[A-Za-z0-9._:-]{1,128}$/;

type WithId = IncomingMessage & { id?: unknown };

/**
 * Echoes a well-formed X-Request-Id, otherwise generates one; either way it is sent back.
 * Runs first (see configureApp) so that even body-parser errors carry the id as traceId.
 */
export function requestIdOf(req: WithId, res: ServerResponse): string {
  if (typeof req.id === 'string') return req.id;
  const header = req.headers['x-request-id'];
  const id = typeof header === 'string' && REQUEST_ID_PATTERN.test(header) ? header : randomUUID();
  res.setHeader('X-Request-Id', id);
  req.id = id;
  return id;
}

/** Structured JSON logs (pino) with the request id on every line; keys never reach the log. */
export function loggerOptions(config: AppConfig): Params {
  return {
    pinoHttp: {
      level: config.logLevel,
      genReqId: requestIdOf,
      redact: {
        paths: ['req.headers["x-api-key"]', 'req.headers.authorization', 'req.headers.cookie'],
        censor: '[redacted]',
      },
      customLogLevel: (_req, res, error) =>
        error || res.statusCode >= 500 ? 'error' : res.statusCode >= 400 ? 'warn' : 'info',
      serializers: {
        req: (req: { id: unknown; method: unknown; url: unknown }) => ({
          id: req.id,
          method: req.method,
          url: req.url,
        }),
      },
      // Health probes every few seconds would drown the log.
      autoLogging: { ignore: (req) => (req.url ?? '').startsWith('/health') },
    },
  };
}
