import { createParamDecorator, type ExecutionContext } from '@nestjs/common';
import type { Request } from 'express';
import { readWritePreconditions, type IfMatch } from './etag';

/**
 * Conditional requests in controllers: the If-Match of a write as a parameter. A response's ETag
 * (or a read's 304) is its Reply's (reply.ts); the header rules themselves are in etag.ts; the
 * OpenAPI side is openapi-conditional.ts.
 */

/** The write's If-Match (400 when malformed, or when If-None-Match is sent on a write). */
export const IfMatchHeader = createParamDecorator(
  (_: unknown, context: ExecutionContext): IfMatch =>
    readWritePreconditions(context.switchToHttp().getRequest<Request>().headers),
);
