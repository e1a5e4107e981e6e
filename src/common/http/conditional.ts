import { createParamDecorator, HttpStatus, type ExecutionContext } from '@nestjs/common';
import type { Request, Response } from 'express';
import { ifNoneMatchHits, readWritePreconditions, type IfMatch } from './etag';

/**
 * Conditional requests in controllers: the If-Match of a write as a parameter, and the ETag (or
 * a 304) of a response. The header rules themselves are in etag.ts; the OpenAPI side is
 * openapi-conditional.ts.
 */

/** The write's If-Match (400 when malformed, or when If-None-Match is sent on a write). */
export const IfMatchHeader = createParamDecorator(
  (_: unknown, context: ExecutionContext): IfMatch =>
    readWritePreconditions(context.switchToHttp().getRequest<Request>().headers),
);

/**
 * A single-resource read: sends `etag`, and answers 304 without a body when the request's
 * If-None-Match names it (GET and HEAD). `render` builds the body only when one is sent.
 */
export function answerRead<T>(res: Response, etag: string, render: () => T): T | undefined {
  // Read first: a malformed header is a 400, which carries no ETag.
  const notModified = ifNoneMatchHits(res.req.headers['if-none-match'], etag);
  res.setHeader('ETag', etag);
  if (notModified) {
    res.status(HttpStatus.NOT_MODIFIED);
    return undefined;
  }
  return render();
}

/** A write's response: the new representation with its ETag. */
export function answerWrite<T>(res: Response, etag: string, body: T): T {
  res.setHeader('ETag', etag);
  return body;
}
