import { json, type NextFunction, type Request, type Response } from 'express';
import type { ProblemRenderer } from '../errors';
import { DomainError } from '../errors';

const METHODS_WITH_BODY = new Set(['POST', 'PUT', 'PATCH', 'DELETE']);

function hasBody(req: Request): boolean {
  const length = req.headers['content-length'];
  return req.headers['transfer-encoding'] !== undefined || (length !== undefined && length !== '0');
}

/**
 * Body handling in front of the routes: JSON only (415 otherwise), a size limit (413) and
 * problem+json for malformed JSON (400). Express error middleware placed right behind the parser
 * catches its errors, which never reach Nest's exception filters.
 */
export function bodyMiddleware(limitBytes: number, renderer: ProblemRenderer) {
  const parseJson = json({
    limit: limitBytes,
    type: ['application/json', 'application/*+json'],
    strict: false,
  });
  return [
    (req: Request, _res: Response, next: NextFunction): void => {
      if (
        METHODS_WITH_BODY.has(req.method) &&
        hasBody(req) &&
        !req.is(['application/json', 'application/*+json'])
      ) {
        next(
          new DomainError(
            'UNSUPPORTED_MEDIA_TYPE',
            `Content-Type ${req.headers['content-type'] ?? '(none)'} is not supported; send application/json.`,
          ),
        );
        return;
      }
      next();
    },
    parseJson,
    (error: unknown, req: Request, res: Response, _next: NextFunction): void => {
      renderer.send(error, req, res);
    },
  ];
}
