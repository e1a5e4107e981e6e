import type { OpenAPIObject } from '@nestjs/swagger';
import {
  COMMON_ERRORS,
  problemType,
  type CommonError,
  type ErrorCatalog,
  type ErrorEntry,
} from '../errors';
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

/**
 * The catalog the document is built from (src/error-catalog.ts gathers every module's codes): the
 * standard problems name these codes of other modules, so it must hold them.
 */
export type DocumentedCatalog = ErrorCatalog &
  Readonly<
    Record<
      | 'INVALID_BRANCH'
      | 'BRANCH_MISMATCH'
      | 'SCHEMA_TOO_COMPLEX'
      | 'SCHEMA_VIOLATION'
      | 'COLLECTION_MOVING'
      | 'FEED_MOVING'
      | 'IP_NOT_ALLOWED'
      | 'COLLECTION_NOT_ALLOWED',
      ErrorEntry
    >
  >;

/** The code an error status stands for when a response names none of its own. */
const DEFAULT_ERROR: Record<number, CommonError> = {
  400: COMMON_ERRORS.VALIDATION_FAILED,
  401: COMMON_ERRORS.UNAUTHENTICATED,
  403: COMMON_ERRORS.FORBIDDEN,
  404: COMMON_ERRORS.ROUTE_NOT_FOUND,
  405: COMMON_ERRORS.METHOD_NOT_ALLOWED,
  409: COMMON_ERRORS.CONFLICT,
  413: COMMON_ERRORS.PAYLOAD_TOO_LARGE,
  415: COMMON_ERRORS.UNSUPPORTED_MEDIA_TYPE,
  429: COMMON_ERRORS.RATE_LIMITED,
  500: COMMON_ERRORS.INTERNAL_ERROR,
  503: COMMON_ERRORS.DATABASE_UNAVAILABLE,
};

/** An example problem body for a code, built from its entry (one place for every example). */
export function problemExample(entry: ErrorEntry, instance = '/…'): Record<string, unknown> {
  const { code, status, title, example } = entry;
  return {
    type: problemType(code),
    title,
    status,
    detail: example?.detail ?? `${title}.`,
    instance,
    code,
    traceId: '5f0c6c1e-3b9f-4d4e-9a43-2b1f0e6d7a11',
    ...(example?.errors ? { errors: example.errors } : {}),
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

/**
 * The routes that name a collection or hand out what is in collections: a key limited to
 * collections is refused one outside them (COLLECTION_NOT_ALLOWED), on a list it is left out.
 */
function reachesCollections(path: string, method: string): string | null {
  if (path.startsWith('/data/{collection}'))
    return "the collection is outside the key's `collections` (the same answer whether it exists or not)";
  if (path === '/export' || path === '/events' || path === '/events/stream')
    return "`collection(s)` names a collection outside the key's `collections` (without it, such collections are left out)";
  if (path === '/import')
    return "a line's collection is outside what the key's `collections` let it write (that line's result)";
  if (path === '/webhooks' && method === 'post')
    return "`collection` is absent or outside the key's `collections`";
  if (path === '/me/export' || (path === '/profile' && method === 'delete'))
    return 'the key is limited to collections (this reaches every one)';
  if (path === '/profile/{accountId}' && method === 'delete')
    return 'with purgeData=true, the key is limited to collections (a purge deletes in every one)';
  return null;
}

/** The catalog's entries of `status` whose codes `description` names, in catalog order. */
function errorsNamed(catalog: ErrorCatalog, description: string, status: number): ErrorEntry[] {
  return Object.values(catalog).filter(
    ({ code, status: own }) =>
      (own as number) === status && new RegExp(`\\b${code}\\b`).test(description),
  );
}

/**
 * Adds the problems every operation can return (so no operation documents only its happy path),
 * moves problem schemas to the application/problem+json media type the API really sends, and
 * gives every problem response examples with its own status and codes.
 */
export function addStandardProblems(
  document: OpenAPIObject,
  catalog: DocumentedCatalog,
): OpenAPIObject {
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
      '400': `${COMMON_ERRORS.VALIDATION_FAILED.title} (VALIDATION_FAILED)`,
      '500': `${COMMON_ERRORS.INTERNAL_ERROR.title} (INTERNAL_ERROR)`,
      '503': `${COMMON_ERRORS.DATABASE_UNAVAILABLE.title} (DATABASE_UNAVAILABLE, with Retry-After)`,
    };
    if (operation.requestBody) {
      standard['400'] =
        `${COMMON_ERRORS.VALIDATION_FAILED.title} (VALIDATION_FAILED, MALFORMED_JSON, or INVALID_CONTENT_ENCODING for a body that does not decode)`;
      standard['413'] = `${COMMON_ERRORS.PAYLOAD_TOO_LARGE.title} (PAYLOAD_TOO_LARGE)`;
      standard['415'] =
        `${COMMON_ERRORS.UNSUPPORTED_MEDIA_TYPE.title}, with gzip, deflate, br or no Content-Encoding (UNSUPPORTED_MEDIA_TYPE, UNSUPPORTED_CONTENT_ENCODING)`;
    }
    if (writesItems(path, method))
      standard['422'] =
        `${catalog.SCHEMA_VIOLATION.title}: the item as it would be stored breaks the collection's JSON Schema, whose action is \`error\`; nothing was written (SCHEMA_VIOLATION, with \`errors\`)`;
    for (const [status, description] of Object.entries(standard)) {
      responses[status] ??= problemResponse(description);
    }
    if (writesItems(path, method) && responses['413'])
      responses['413'].description +=
        '; TOO_MANY_WORDS: under a search configuration, an item as it would be stored holds more words in its search fields than SEARCH_MAX_WORDS_PER_ITEM (nothing was written)';
    if (writesItems(path, method))
      responses['400']!.description +=
        '; SCHEMA_TOO_COMPLEX: checking the items against the collection schema ran over SCHEMA_CHECK_MAX_MS, or compiling the schema over SCHEMA_COMPILE_MAX_MS (nothing was written)';
    const moving = movingWrites(path, method);
    if (moving) responses['503']!.description += `; ${moving}`;
    // A response's codes: those its description names, else the status's default code.
    const errorsOf: Record<string, ErrorEntry[]> = {};
    for (const [status, response] of Object.entries(responses)) {
      const numeric = Number(status);
      const named = errorsNamed(catalog, response.description, numeric);
      errorsOf[status] =
        named.length > 0 ? named : [DEFAULT_ERROR[numeric] ?? COMMON_ERRORS.INTERNAL_ERROR];
    }
    // Every route validates its query (400 VALIDATION_FAILED) whatever its 400 describes.
    if (!errorsOf['400']!.some(({ code }) => code === 'VALIDATION_FAILED'))
      errorsOf['400']!.unshift(COMMON_ERRORS.VALIDATION_FAILED);
    if (takesBranch(operation)) {
      responses['400']!.description +=
        `; INVALID_BRANCH: ${BRANCH_HEADER} is not a valid branch name`;
      errorsOf['400']!.push(catalog.INVALID_BRANCH);
      responses['403'] ??= problemResponse(COMMON_ERRORS.FORBIDDEN.title);
      errorsOf['403'] ??= [];
      responses['403'].description +=
        `; BRANCH_MISMATCH: ${BRANCH_HEADER} contradicts the branch the key is bound to`;
      errorsOf['403'].push(catalog.BRANCH_MISMATCH);
      responses['403'].description +=
        "; IP_NOT_ALLOWED: the key's allowedIps do not hold the client address (not a failed authentication)";
      errorsOf['403'].push(catalog.IP_NOT_ALLOWED);
      const collections = reachesCollections(path, method);
      if (collections) {
        responses['403'].description += `; COLLECTION_NOT_ALLOWED: ${collections}`;
        errorsOf['403'].push(catalog.COLLECTION_NOT_ALLOWED);
      }
    }
    for (const [status, response] of Object.entries(responses)) {
      const media = response.content?.[PROBLEM_MEDIA_TYPE];
      if (!media) continue;
      delete media.example;
      media.examples = Object.fromEntries(
        errorsOf[status]!.map((entry) => [
          entry.code,
          { summary: entry.title, value: problemExample(entry, path) },
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
export const UNROUTED_RESPONSES: Record<number, { name: string; entry: CommonError; why: string }> =
  {
    400: {
      name: 'RejectedBeforeRouting',
      entry: COMMON_ERRORS.VALIDATION_FAILED,
      why: 'a prototype-named query key, or a body that does not parse (MALFORMED_JSON, INVALID_CONTENT_ENCODING), on any path',
    },
    404: {
      name: 'NotFound',
      entry: COMMON_ERRORS.ROUTE_NOT_FOUND,
      why: 'a path this document does not list',
    },
    405: {
      name: 'MethodNotAllowed',
      entry: COMMON_ERRORS.METHOD_NOT_ALLOWED,
      why: 'a listed path with a method it does not list (Allow names those it does)',
    },
    413: {
      name: 'PayloadTooLarge',
      entry: COMMON_ERRORS.PAYLOAD_TOO_LARGE,
      why: 'a body over the limit, on any path',
    },
    415: {
      name: 'UnsupportedMediaType',
      entry: COMMON_ERRORS.UNSUPPORTED_MEDIA_TYPE,
      why: 'a body that is not JSON, or an unsupported Content-Encoding, on any path',
    },
  };

export function addStandardResponses(document: OpenAPIObject): void {
  document.components ??= {};
  const responses = (document.components.responses ??= {});
  for (const { name, entry, why } of Object.values(UNROUTED_RESPONSES)) {
    const response = problemResponse(`${entry.title}: ${why}`);
    response.content![PROBLEM_MEDIA_TYPE]!.examples = {
      [entry.code]: { summary: entry.title, value: problemExample(entry) },
    };
    response.headers = {
      'X-Request-Id': HEADERS.requestId,
      ...(entry.code === 'METHOD_NOT_ALLOWED' ? { Allow: HEADERS.allow } : {}),
    };
    responses[name] = response;
  }
}
