import { json, type NextFunction, type Request, type Response } from 'express';
import type { ProblemRenderer } from '../errors';
import {
  PayloadTooLargeError,
  UnsupportedContentEncodingError,
  UnsupportedMediaTypeError,
} from '../errors';

const METHODS_WITH_BODY = new Set(['POST', 'PUT', 'PATCH', 'DELETE']);
const JSON_TYPES = ['application/json', 'application/*+json'];

/**
 * Content-Encodings a body may use. body-parser also decodes zstd, but only on Node versions
 * whose zlib has it; refusing it everywhere keeps the contract the same on every supported Node.
 */
export const SUPPORTED_CONTENT_ENCODINGS: ReadonlySet<string> = new Set([
  'identity',
  'gzip',
  'deflate',
  'br',
]);

/** Whether the request carries a body (a length above 0, or a chunked one). */
export function hasBody(req: Request): boolean {
  const length = req.headers['content-length'];
  return req.headers['transfer-encoding'] !== undefined || (length !== undefined && length !== '0');
}

/** The Content-Encoding as body-parser reads it: absent or empty means identity, case ignored. */
function contentEncodingOf(req: Request): string {
  return (req.headers['content-encoding'] || 'identity').toLowerCase();
}

/** A route whose body its handler reads as a stream: its media type and largest size. */
export interface StreamedBody {
  method: string;
  path: string;
  /** The media type it takes; null: any (a file upload, whose type is the file's). */
  type: string | null;
  /** Null: the handler checks the size itself, after authentication (a limit per tenant). */
  maxBytes: number | null;
  /** Only the identity Content-Encoding (bytes stored as they come). */
  identityOnly?: boolean;
}

/**
 * A streamed body is checked here like a JSON one — its media type (415), its Content-Encoding
 * (415) and its Content-Length (413) — and left unread for the handler.
 */
function checkStreamed(req: Request, route: StreamedBody): Error | null {
  if (route.type !== null && !req.is(route.type))
    return new UnsupportedMediaTypeError(
      `Content-Type ${req.headers['content-type'] ?? '(none)'} is not supported; send ${route.type}.`,
    );
  const encoding = contentEncodingOf(req);
  if (route.identityOnly && encoding !== 'identity')
    return new UnsupportedContentEncodingError(
      `Content-Encoding ${JSON.stringify(encoding.slice(0, 64))} is not taken here: the bytes are stored as sent; send no Content-Encoding.`,
    );
  if (!SUPPORTED_CONTENT_ENCODINGS.has(encoding))
    return new UnsupportedContentEncodingError(
      `Content-Encoding ${JSON.stringify(encoding.slice(0, 64))} is not supported; send gzip, deflate, br or no Content-Encoding.`,
    );
  const length = Number(req.headers['content-length'] ?? 0);
  if (route.maxBytes !== null && length > route.maxBytes)
    return new PayloadTooLargeError(route.maxBytes);
  return null;
}

/**
 * Body handling in front of the routes: JSON only (415 otherwise) but on `streamed` routes, gzip, deflate or br
 * Content-Encoding (415 otherwise; a body that does not decode is a 400 INVALID_CONTENT_ENCODING,
 * see ProblemRenderer), a size limit on the decoded body (413) and problem+json for malformed
 * JSON (400). Express error middleware placed right behind the parser catches its errors, which
 * never reach Nest's exception filters.
 */
export function bodyMiddleware(
  limitBytes: number,
  renderer: ProblemRenderer,
  streamed: readonly StreamedBody[] = [],
) {
  const parseJson = json({
    limit: limitBytes,
    type: JSON_TYPES,
    strict: false,
  });
  return [
    (req: Request, _res: Response, next: NextFunction): void => {
      if (!hasBody(req)) {
        next();
        return;
      }
      const route = streamed.find((r) => r.path === req.path);
      if (route) {
        // The handler reads it; the JSON parser below leaves other media types alone. Another
        // method on the path is routing's to answer (405), whatever its body.
        next((route.method === req.method && checkStreamed(req, route)) || undefined);
        return;
      }
      const isJson = Boolean(req.is(JSON_TYPES));
      if (METHODS_WITH_BODY.has(req.method) && !isJson) {
        next(
          new UnsupportedMediaTypeError(
            `Content-Type ${req.headers['content-type'] ?? '(none)'} is not supported; send application/json.`,
          ),
        );
        return;
      }
      const encoding = contentEncodingOf(req);
      if (isJson && !SUPPORTED_CONTENT_ENCODINGS.has(encoding)) {
        next(
          new UnsupportedContentEncodingError(
            `Content-Encoding ${JSON.stringify(encoding.slice(0, 64))} is not supported; send gzip, deflate, br or no Content-Encoding.`,
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
