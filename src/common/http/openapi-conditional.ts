import { ApiExtension, type OpenAPIObject, type ParameterObject } from '@nestjs/swagger';
import { COMMON_ERRORS } from '../errors';
import { header, operations, problemResponse, type Response } from './openapi-shared';

/**
 * Conditional requests in the OpenAPI document. An operation says what it takes part in with
 * `@ApiConditional(kind)`; addConditionalRequests then documents, on exactly those operations,
 * the ETag response header, the If-None-Match / If-Match request headers and the 304 and 412
 * responses (see docs/requests.md, "Conditional requests").
 */

/**
 * `read`: a single-resource GET (ETag, If-None-Match → 304). `write`: a PUT or DELETE that
 * evaluates If-Match (→ 412) and answers with the new representation's ETag. `selective-write`:
 * a write that addresses one resource or, on request, many: If-Match as for `write`, and an ETag
 * only when the answer is one representation. `create`: a POST whose response carries the new
 * resource's ETag.
 */
export type ConditionalKind = 'read' | 'write' | 'selective-write' | 'create';

const EXTENSION = 'x-conditional';

export const ApiConditional = (kind: ConditionalKind): MethodDecorator =>
  ApiExtension(EXTENSION, kind);

const EXAMPLE_TAG = '"665f1c2a9b1e8a0012345678.3"';

const ETAG_MEANING =
  'a strong tag `"<identity>.<revision>"` that changes with every write and never repeats for another representation';

const ETAG = (required: boolean) =>
  header(`The representation's entity tag: ${ETAG_MEANING}`, { type: 'string' }, required);

const IF_NONE_MATCH: ParameterObject = {
  name: 'If-None-Match',
  in: 'header',
  required: false,
  description:
    'An ETag read earlier (or a list of them, or `*`): when one names the current representation (weak comparison, `W/` ignored) the answer is 304 without a body.',
  schema: { type: 'string' },
  example: EXAMPLE_TAG,
};

const IF_MATCH: ParameterObject = {
  name: 'If-Match',
  in: 'header',
  required: false,
  description:
    'Write only if the resource is still at this ETag (or one of a list; strong comparison). `*`: only if it exists. Otherwise 412 with the current ETag, and nothing is changed. If-None-Match on a write is a 400.',
  schema: { type: 'string' },
  example: EXAMPLE_TAG,
};

const NOT_MODIFIED: Response = {
  description: 'Not Modified: If-None-Match names the current ETag; no body',
  headers: { ETag: ETAG(true) },
};

function preconditionFailed(): Response {
  const response = problemResponse(
    `${COMMON_ERRORS.PRECONDITION_FAILED.title} (PRECONDITION_FAILED): the resource is at another ETag than If-Match names (the current one is sent in ETag), or it does not exist (no ETag)`,
  );
  response.headers = { ETag: ETAG(false) };
  return response;
}

/** Adds what `@ApiConditional` promises; runs before the problem and header completion steps. */
export function addConditionalRequests(document: OpenAPIObject): void {
  for (const [, , operation] of operations(document)) {
    const extended = operation as typeof operation & { [EXTENSION]?: ConditionalKind };
    const kind = extended[EXTENSION];
    if (kind === undefined) continue;
    delete extended[EXTENSION];
    const responses = operation.responses as Record<string, Response>;
    for (const [status, response] of Object.entries(responses)) {
      // Every success that carries the representation carries its tag (not a DELETE's 204).
      // (A new object: decorators may share one response object between operations.)
      if (status.startsWith('2') && response.content) {
        const etag = ETAG(kind !== 'selective-write');
        responses[status] = { ...response, headers: { ...response.headers, ETag: etag } };
      }
    }
    if (kind === 'read') {
      operation.parameters = [...(operation.parameters ?? []), IF_NONE_MATCH];
      responses['304'] = structuredClone(NOT_MODIFIED);
    } else if (kind === 'write' || kind === 'selective-write') {
      operation.parameters = [...(operation.parameters ?? []), IF_MATCH];
      responses['412'] = preconditionFailed();
    }
  }
}
