import type { OpenAPIObject } from '@nestjs/swagger';

/** Types, names and small builders shared by the OpenAPI document's completion steps. */

/** Names of the two security schemes (X-Api-Key header, Bearer token) in the document. */
export const API_KEY_SCHEME = 'apiKey';
export const BEARER_SCHEME = 'bearer';

/** The X-Branch header parameter; operations that take it can answer INVALID_BRANCH and BRANCH_MISMATCH. */
export const BRANCH_HEADER = 'X-Branch';
export const TEAM_HEADER = 'X-Team';
/**
 * Extension an operation carries from @AuthHeadersFirst until the document is built: its
 * authentication headers move before its other parameters, and the mark is removed.
 */
export const AUTH_HEADERS_FIRST = 'x-auth-headers-first';
/**
 * Extension naming the scope an operation needs (@NeedsScope; docs/keys.md, "Authentication"); its 403
 * response names INSUFFICIENT_SCOPE. Null until the document is built where a route needs no
 * scope (then removed).
 */
export const REQUIRED_SCOPE_EXTENSION = 'x-required-scope';

export type Operation = NonNullable<OpenAPIObject['paths'][string]['get']>;
export type Response = Operation['responses'][string] & {
  description: string;
  content?: Record<string, MediaType>;
  headers?: Record<string, unknown>;
};
export interface MediaType {
  schema?: Schema;
  example?: unknown;
  examples?: Record<string, unknown>;
}
export type Schema = Record<string, unknown> & {
  $ref?: string;
  type?: string;
  properties?: Record<string, Schema>;
  required?: string[];
  items?: Schema;
  description?: string;
};

export const METHODS = ['get', 'put', 'post', 'delete', 'patch'] as const;
export const PROBLEM_SCHEMA = 'ProblemDto';
export const PROBLEM_REF = `#/components/schemas/${PROBLEM_SCHEMA}`;
export const PROBLEM_MEDIA_TYPE = 'application/problem+json';

export function header(
  description: string,
  schema: Schema,
  required: boolean,
): Record<string, unknown> {
  return { description, required, schema };
}

/** The routes that write items: a collection schema checks them (422, Schema-Warnings). */
export const ITEM_WRITES = /^\/data\/\{collection\}(\/bulk|\/\{indexName\}\/\{indexValue\})?$/;

/** Whether an operation writes items a collection schema checks (deletes store none). */
export function writesItems(path: string, method: string): boolean {
  return (method === 'post' || method === 'put' || method === 'patch') && ITEM_WRITES.test(path);
}

export const HEADERS = {
  schemaWarnings: header(
    "Only when the item written breaks its collection's schema and the schema's action is `warn`: the places and keywords it fails, as comma-separated `<pointer> <keyword>` pairs, each pointer a JSON Pointer in its URI fragment form (`#/address/city required, #/age minimum`); at most 4,096 characters",
    { type: 'string' },
    false,
  ),
  requestId: header(
    'The request id (echoed from the request, or generated); also the problem `traceId`, unless the service traces requests (then that is the trace id)',
    { type: 'string' },
    true,
  ),
  limit: (required: boolean) =>
    header('Requests allowed per window for this key', { type: 'integer' }, required),
  remaining: (required: boolean) =>
    header('Requests left in the current window', { type: 'integer' }, required),
  reset: (required: boolean) =>
    header('Seconds until the window resets', { type: 'integer' }, required),
  retryAfter: header('Seconds to wait before retrying', { type: 'integer', minimum: 1 }, true),
  link: header(
    'Next page: `<url>; rel="next"`, present when a further page exists',
    { type: 'string' },
    false,
  ),
  allow: header('The methods the path supports', { type: 'string' }, true),
};

export function problemResponse(description: string): Response {
  return { description, content: { [PROBLEM_MEDIA_TYPE]: { schema: { $ref: PROBLEM_REF } } } };
}

export function operations(document: OpenAPIObject): [string, string, Operation][] {
  return Object.entries(document.paths).flatMap(([path, item]) =>
    METHODS.flatMap((method) => (item[method] ? [[path, method, item[method]] as const] : [])),
  ) as [string, string, Operation][];
}

/**
 * The extension an operation carries when its body differs by media type (a file upload: the
 * bytes, or a multipart form with a file part): the content map that replaces the one Nest
 * writes, which gives every consumed type one schema.
 */
export const REQUEST_BODY_CONTENT = 'x-request-body-content';

/** Puts each operation's REQUEST_BODY_CONTENT in its request body. */
export function applyRequestBodyContent(document: OpenAPIObject): void {
  for (const [, , operation] of operations(document)) {
    const marked = operation as unknown as Record<string, unknown>;
    const content = marked[REQUEST_BODY_CONTENT] as Record<string, unknown> | undefined;
    if (!content) continue;
    delete marked[REQUEST_BODY_CONTENT];
    const body = operation.requestBody as { content?: unknown } | undefined;
    if (body) body.content = content;
  }
}

export function takesBranch(operation: Operation): boolean {
  return (operation.parameters ?? []).some(
    (p) => 'name' in p && p.in === 'header' && p.name === BRANCH_HEADER,
  );
}
