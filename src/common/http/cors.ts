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

/** The CORS headers of an answer (a publishable key's refusal removes them). */
export const CORS_RESPONSE_HEADERS = [
  'Access-Control-Allow-Origin',
  'Access-Control-Allow-Credentials',
  'Access-Control-Expose-Headers',
];

/** Request headers a browser may send with a publishable key (reads only). */
export const PUBLISHABLE_ALLOWED_HEADERS = [
  'X-Api-Key',
  'Authorization',
  'X-Branch',
  'X-Request-Id',
  'If-None-Match',
  'Last-Event-ID',
];

/**
 * The routes a publishable key may call, by path: the item reads under `/data/{collection}` and
 * the change feed (`/events`, `/events/stream`). Only for preflights: which route really admits
 * the key is its @Auth list (src/routes.spec.ts holds the two to each other).
 */
export function isPublishablePath(path: string): boolean {
  return /^\/data\/[^/]+(?:\/[^/]+){0,2}\/?$/.test(path) || /^\/events(?:\/stream)?\/?$/.test(path);
}

/**
 * CORS in two parts, both answered here before authentication (a preflight carries no key):
 *
 * - CORS_ORIGINS: a preflight from one of them is answered 204 for every route, and their
 *   requests get CORS headers. Empty: this part is off.
 * - Publishable keys: a preflight of a GET or HEAD of a publishable route (isPublishablePath)
 *   from any other origin is answered 204 with that origin, so that a page may send its
 *   X-Api-Key; the preflight cannot know the key, so the real request decides — ApiKeyGuard
 *   answers it with `Access-Control-Allow-Origin` only when the origin is one of the key's
 *   allowedOrigins, and refuses it (403 ORIGIN_NOT_ALLOWED, no CORS headers) otherwise. A page
 *   of such an origin can do nothing with another key: those answers carry no CORS headers.
 *
 * Requests from other origins get no CORS headers and go on as usual (a preflight of another
 * route then meets the routes: 405).
 */
export function corsMiddleware(origins: CorsOrigins): RequestHandler {
  const configured = configuredCors(origins);
  const publishable = cors({
    origin: true,
    methods: ['GET', 'HEAD'],
    allowedHeaders: PUBLISHABLE_ALLOWED_HEADERS,
    exposedHeaders: CORS_EXPOSED_HEADERS,
    maxAge: 600,
  });
  return (req, res, next) => {
    const origin = req.headers.origin;
    const requested = req.headers['access-control-request-method']?.toUpperCase();
    if (
      req.method === 'OPTIONS' &&
      origin !== undefined &&
      !configured.allows(origin) &&
      (requested === 'GET' || requested === 'HEAD') &&
      isPublishablePath(req.path)
    )
      return publishable(req, res, next);
    if (configured.handler) return configured.handler(req, res, next);
    next();
  };
}

/** CORS for the CORS_ORIGINS: its handler (null when off) and whether it allows an origin. */
function configuredCors(origins: CorsOrigins): {
  handler: RequestHandler | null;
  allows: (origin: string) => boolean;
} {
  if (origins !== '*' && origins.length === 0) return { handler: null, allows: () => false };
  const allowed = origins === '*' ? null : new Set(origins.map((o) => o.toLowerCase()));
  const allows = (origin: string): boolean => allowed === null || allowed.has(origin.toLowerCase());
  const handler = cors({
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
  return { handler, allows };
}
