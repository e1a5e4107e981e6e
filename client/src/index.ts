import createClient, { type Client } from 'openapi-fetch';
import type { components, operations, paths } from './schema.js';
import {
  ApiProblemError,
  apiHeaders,
  baseUrlOf,
  problemOf,
  serializeQuery,
  type ApiClientOptions,
} from './http.js';

export type { components, operations, paths };
export {
  ApiProblemError,
  problemOf,
  serializeQuery,
  type ApiClientOptions,
  type Problem,
  type ProblemCode,
} from './http.js';
export * from './events.js';
export * from './files.js';
export * from './links.js';
export * from './transfer.js';

/** Every schema of the document by name: `Schemas['ProjectDto']`. */
export type Schemas = components['schemas'];

/** A client for every operation of the service, typed by path, method, parameters and body. */
export type ApiClient = Client<paths>;

/**
 * The typed client: `api.GET('/project/{projectId}', { params: { path: { projectId } } })`
 * resolves to `{ data }` on success or `{ error }` with the Problem on failure, with
 * `response` (status, headers) in both.
 */
export function createApiClient(options: ApiClientOptions): ApiClient {
  return createClient<paths>({
    baseUrl: baseUrlOf(options),
    headers: apiHeaders(options),
    querySerializer: serializeQuery,
    ...(options.fetch ? { fetch: options.fetch } : {}),
  });
}

/** What openapi-fetch resolves every call to: `data` on success, `error` on failure, never both. */
interface CallResult {
  data?: unknown;
  error?: unknown;
  response: Response;
}

/** The success member of a call's result type. */
type Success<R> = Extract<R, { error?: never }>;

function succeeded<R extends CallResult>(result: R): result is Success<R> {
  return !('error' in result);
}

/**
 * The data of a successful call (undefined for a 204), or an ApiProblemError: for code that
 * treats every failure as exceptional. `const profile = await unwrap(api.GET('/profile'))`.
 */
export async function unwrap<R extends CallResult>(call: Promise<R>): Promise<Success<R>['data']> {
  const result = await call;
  if (succeeded(result)) return result.data;
  throw new ApiProblemError(result.response.status, problemOf(result.error));
}
