import cors from 'cors';
import type { RequestHandler } from 'express';

/** '*' (any origin), or the origins allowed to call the API from a browser; [] = CORS off. */
export type CorsOrigins = '*' | readonly string[];

/**
 * Response headers a browser client may read: caching, paging, tracing, rate limits, replays,
 * find-or-create, purges, where an accepted erasure is followed, and file downloads (ranges,
 * names).
 */
export const CORS_EXPOSED_HEADERS = [
  'ETag',
  'Link',
  'X-Request-Id',
  'Retry-After',
  'X-RateLimit-Limit',
  'X-RateLimit-Remaining',
  'X-RateLimit-Reset',
  'Idempotent-Replayed',
  'X-Item-Created',
  'X-Items-Deleted',
  'Location',
  'Schema-Warnings',
  'Feed-Position',
  'Content-Range',
  'Content-Disposition',
  'Accept-Ranges',
];

/** Request headers the API reads. */
export const CORS_ALLOWED_HEADERS = [
  'X-Api-Key',
  'Authorization',
  'Content-Type',
  'Content-Encoding',
  'X-Branch',
  'X-Team',
  'X-Request-Id',
  'If-Match',
  'If-None-Match',
  'Idempotency-Key',
  'Range',
  'If-Range',
];

/**
 * CORS for the allowed origins, or null when CORS is off. A preflight from an allowed origin is
 * answered here (204), before authentication: it carries no key. Requests from other origins
 * get no CORS headers and go on as usual (a preflight then meets the routes: 405).
 */
export function corsMiddleware(origins: CorsOrigins): RequestHandler | null {
  if (origins !== '*' && origins.length === 0) return null;
  const allowed = origins === '*' ? null : new Set(origins.map((o) => o.toLowerCase()));
  return cors({
    origin:
      allowed === null
        ? '*'
        : (origin, callback) => {
            const known = origin !== undefined && allowed.has(origin.toLowerCase());
            callback(null, known ? origin : false);
          },
    // Every method a route has (PATCH: array operations on data items).
    methods: ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE'],
    allowedHeaders: CORS_ALLOWED_HEADERS,
    exposedHeaders: CORS_EXPOSED_HEADERS,
    // Browsers cap this (Chrome: 2 hours); 10 minutes keeps a configuration change visible soon.
    maxAge: 600,
  });
}
