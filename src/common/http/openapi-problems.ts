import type { OpenAPIObject } from '@nestjs/swagger';
import { ERROR_CATALOG, problemType, type ErrorCode } from '../errors';
import {
  BRANCH_HEADER,
  HEADERS,
  writesItems,
  PROBLEM_MEDIA_TYPE,
  PROBLEM_REF,
  operations,
  problemResponse,
  takesBranch,
  type Response,
} from './openapi-shared';

/** Problem responses of the OpenAPI document: examples from the error catalog, standard errors. */

/** The code an error status stands for when a response names none of its own. */
const DEFAULT_CODE: Record<number, ErrorCode> = {
  400: 'VALIDATION_FAILED',
  401: 'UNAUTHENTICATED',
  403: 'FORBIDDEN',
  404: 'ROUTE_NOT_FOUND',
  405: 'METHOD_NOT_ALLOWED',
  409: 'CONFLICT',
  413: 'PAYLOAD_TOO_LARGE',
  415: 'UNSUPPORTED_MEDIA_TYPE',
  429: 'RATE_LIMITED',
  500: 'INTERNAL_ERROR',
  503: 'DATABASE_UNAVAILABLE',
};

const EXAMPLE_DETAIL: Partial<Record<ErrorCode, string>> = {
  VALIDATION_FAILED: '1 field is not valid: name',
  UNAUTHENTICATED: 'Send a valid API key as X-Api-Key or Authorization: Bearer.',
  INVALID_BRANCH: "X-Branch must be '' or match ^[a-z0-9][a-z0-9._-]{0,62}$.",
  BRANCH_MISMATCH: 'The key is bound to branch staging; X-Branch names another.',
  RATE_LIMITED: 'Too many requests for this API key. Retry after the time in Retry-After.',
  PRECONDITION_FAILED:
    'The resource is at ETag "665f1c2a9b1e8a0012345678.4", which If-Match does not name; nothing was changed. Read it again and retry.',
  INTERNAL_ERROR: 'An unexpected error occurred. Quote traceId 5f0c6c1e-… when reporting it.',
  DATABASE_UNAVAILABLE: 'The database is unavailable or too slow. Retry later.',
};

/** An example problem body for `code`, built from the error catalog (one place for every example). */
export function problemExample(code: ErrorCode, instance = '/…'): Record<string, unknown> {
  const { status, title } = ERROR_CATALOG[code];
  return {
    type: problemType(code),
    title,
    status,
    detail: EXAMPLE_DETAIL[code] ?? `${title}.`,
    instance,
    code,
    traceId: '5f0c6c1e-3b9f-4d4e-9a43-2b1f0e6d7a11',
    ...(code === 'VALIDATION_FAILED'
      ? {
          errors: [
            { field: 'name', message: 'name must be shorter than or equal to 200 characters' },
          ],
        }
      : {}),
    ...(code === 'SCHEMA_VIOLATION'
      ? {
          errors: [
            { field: 'item.age', pointer: '/age', keyword: 'minimum', message: 'must be >= 0' },
          ],
        }
      : {}),
  };
}

/**
 * What a tenant's write may meet while the tenant is moved to another cluster (docs/deployment.md,
 * "Moving tenants"): every write of a tenant route can be paused for the switch of its change feed
 * and stored responses, a data write also for the switch of its collection. Null elsewhere.
 */
function movingWrites(path: string, method: string): string | null {
  if (method === 'get' || method === 'head' || /^\/(admin|health|metrics|docs)/.test(path)) {
    return null;
  }
  const feed =
    'FEED_MOVING: the tenant is being moved to another cluster and its writes are paused briefly (Retry-After)';
  return path.startsWith('/data/{collection}')
    ? `${feed}; COLLECTION_MOVING: the same, for this collection's switch`
    : feed;
}

/** The catalog codes of `status` that `description` names, in catalog order. */
function codesNamed(description: string, status: number): ErrorCode[] {
  return (Object.keys(ERROR_CATALOG) as ErrorCode[]).filter(
    (code) =>
      (ERROR_CATALOG[code].status as number) === status &&
      new RegExp(`\\b${code}\\b`).test(description),
  );
}

/**
 * Adds the problems every operation can return (so no operation documents only its happy path),
 * moves problem schemas to the application/problem+json media type the API really sends, and
 * gives every problem response examples with its own status and codes.
 */
export function addStandardProblems(document: OpenAPIObject): OpenAPIObject {
  for (const [path, method, operation] of operations(document)) {
    // Class-level decorators share one response object between the controller's operations;
    // each operation gets its own, so that what follows applies once per operation.
    operation.responses = structuredClone(operation.responses);
    const responses = operation.responses as Record<string, Response>;
    for (const [status, response] of Object.entries(responses)) {
      // The problem filter renders every error, whatever schema a decorator declared.
      if (Number(status) >= 400 && response.content?.['application/json']) {
        const json = response.content['application/json'];
        if (json.schema?.$ref !== PROBLEM_REF) response.description += ' (a problem)';
        response.content = { [PROBLEM_MEDIA_TYPE]: { schema: { $ref: PROBLEM_REF } } };
      }
    }
    const standard: Record<string, string> = {
      // Every route refuses prototype-named query keys (__proto__, constructor, prototype).
      '400': `${ERROR_CATALOG.VALIDATION_FAILED.title} (VALIDATION_FAILED)`,
      '500': `${ERROR_CATALOG.INTERNAL_ERROR.title} (INTERNAL_ERROR)`,
      '503': `${ERROR_CATALOG.DATABASE_UNAVAILABLE.title} (DATABASE_UNAVAILABLE, with Retry-After)`,
    };
    if (operation.requestBody) {
      standard['400'] =
        `${ERROR_CATALOG.VALIDATION_FAILED.title} (VALIDATION_FAILED, MALFORMED_JSON, or INVALID_CONTENT_ENCODING for a body that does not decode)`;
      standard['413'] = `${ERROR_CATALOG.PAYLOAD_TOO_LARGE.title} (PAYLOAD_TOO_LARGE)`;
      standard['415'] =
        `${ERROR_CATALOG.UNSUPPORTED_MEDIA_TYPE.title}, with gzip, deflate, br or no Content-Encoding (UNSUPPORTED_MEDIA_TYPE, UNSUPPORTED_CONTENT_ENCODING)`;
    }
    if (writesItems(path, method))
      standard['422'] =
        `${ERROR_CATALOG.SCHEMA_VIOLATION.title}: the item as it would be stored breaks the collection's JSON Schema, whose action is \`error\`; nothing was written (SCHEMA_VIOLATION, with \`errors\`)`;
    for (const [status, description] of Object.entries(standard)) {
      responses[status] ??= problemResponse(description);
    }
    if (writesItems(path, method))
      responses['400']!.description +=
        '; SCHEMA_TOO_COMPLEX: checking the items against the collection schema ran over SCHEMA_CHECK_MAX_MS, or compiling the schema over SCHEMA_COMPILE_MAX_MS (nothing was written)';
    const moving = movingWrites(path, method);
    if (moving) responses['503']!.description += `; ${moving}`;
    // A response's codes: those its description names, else the status's default code.
    const codesOf: Record<string, ErrorCode[]> = {};
    for (const [status, response] of Object.entries(responses)) {
      const numeric = Number(status);
      const named = codesNamed(response.description, numeric);
      codesOf[status] = named.length > 0 ? named : [DEFAULT_CODE[numeric] ?? 'INTERNAL_ERROR'];
    }
    // Every route validates its query (400 VALIDATION_FAILED) whatever its 400 describes.
    if (!codesOf['400']!.includes('VALIDATION_FAILED'))
      codesOf['400']!.unshift('VALIDATION_FAILED');
    if (takesBranch(operation)) {
      responses['400']!.description +=
        `; INVALID_BRANCH: ${BRANCH_HEADER} is not a valid branch name`;
      codesOf['400']!.push('INVALID_BRANCH');
      responses['403'] ??= problemResponse(ERROR_CATALOG.FORBIDDEN.title);
      codesOf['403'] ??= [];
      responses['403'].description +=
        `; BRANCH_MISMATCH: ${BRANCH_HEADER} contradicts the branch the key is bound to`;
      codesOf['403'].push('BRANCH_MISMATCH');
    }
    for (const [status, response] of Object.entries(responses)) {
      const media = response.content?.[PROBLEM_MEDIA_TYPE];
      if (!media) continue;
      const codes = codesOf[status]!;
      delete media.example;
      media.examples = Object.fromEntries(
        codes.map((code) => [
          code,
          { summary: ERROR_CATALOG[code].title, value: problemExample(code, path) },
        ]),
      );
    }
  }
  return document;
}

/**
 * Answers to requests outside the document, so that they are described (and checkable) too. The
 * query-key guard and the body parser run before routing, on every path; then an unlisted path is
 * a 404, and a listed path with a method it does not list a 405.
 */
export const UNROUTED_RESPONSES: Record<number, { name: string; code: ErrorCode; why: string }> = {
  400: {
    name: 'RejectedBeforeRouting',
    code: 'VALIDATION_FAILED',
    why: 'a prototype-named query key, or a body that does not parse (MALFORMED_JSON, INVALID_CONTENT_ENCODING), on any path',
  },
  404: { name: 'NotFound', code: 'ROUTE_NOT_FOUND', why: 'a path this document does not list' },
  405: {
    name: 'MethodNotAllowed',
    code: 'METHOD_NOT_ALLOWED',
    why: 'a listed path with a method it does not list (Allow names those it does)',
  },
  413: {
    name: 'PayloadTooLarge',
    code: 'PAYLOAD_TOO_LARGE',
    why: 'a body over the limit, on any path',
  },
  415: {
    name: 'UnsupportedMediaType',
    code: 'UNSUPPORTED_MEDIA_TYPE',
    why: 'a body that is not JSON, or an unsupported Content-Encoding, on any path',
  },
};

export function addStandardResponses(document: OpenAPIObject): void {
  document.components ??= {};
  const responses = (document.components.responses ??= {});
  for (const { name, code, why } of Object.values(UNROUTED_RESPONSES)) {
    const response = problemResponse(`${ERROR_CATALOG[code].title}: ${why}`);
    response.content![PROBLEM_MEDIA_TYPE]!.examples = {
      [code]: { summary: ERROR_CATALOG[code].title, value: problemExample(code) },
    };
    response.headers = {
      'X-Request-Id': HEADERS.requestId,
      ...(code === 'METHOD_NOT_ALLOWED' ? { Allow: HEADERS.allow } : {}),
    };
    responses[name] = response;
  }
}
