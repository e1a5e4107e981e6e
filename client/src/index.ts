import createClient, { type Client, type ClientOptions } from 'openapi-fetch';
import type { components, operations, paths } from '../schema';

export type { components, operations, paths };

/** Every schema of the document by name: `Schemas['ProjectDto']`. */
export type Schemas = components['schemas'];

/** The RFC 9457 problem every error response carries (`application/problem+json`). */
export type Problem = Schemas['ProblemDto'];

/** Its stable machine-readable `code`. */
export type ProblemCode = Problem['code'];

/** A client for every operation of the service, typed by path, method, parameters and body. */
export type ApiClient = Client<paths>;

export interface ApiClientOptions {
  /** Where the service listens, e.g. `https://api.example.com` (a path prefix behind a proxy is kept). */
  baseUrl: string;
  /** The key every request sends as `X-Api-Key`. */
  apiKey: string;
  /**
   * The context branch sent as `X-Branch` on every request ('' = the standard branch). Leave it
   * out for a key bound to a branch: the key's own branch applies, and a different one is a 403.
   */
  branch?: string;
  /** A fetch implementation other than the global one (tests, instrumentation). */
  fetch?: ClientOptions['fetch'];
}

/**
 * The typed client: `api.GET('/project/{projectId}', { params: { path: { projectId } } })`
 * resolves to `{ data }` on success or `{ error }` with the Problem on failure, with
 * `response` (status, headers) in both.
 */
export function createApiClient(options: ApiClientOptions): ApiClient {
  const headers: Record<string, string> = { 'X-Api-Key': options.apiKey };
  if (options.branch !== undefined) headers['X-Branch'] = options.branch;
  return createClient<paths>({
    baseUrl: options.baseUrl.replace(/\/+$/, ''),
    headers,
    querySerializer: serializeQuery,
    ...(options.fetch ? { fetch: options.fetch } : {}),
  });
}

/**
 * The query string as the service reads it: objects (deepObject parameters) become
 * `name[key]=v` and, one level down, `name[key][operator]=v` (`filter: {total: {gte: '10'}}`);
 * arrays repeat the parameter. openapi-fetch's own serializer stops at the first level.
 */
export function serializeQuery(query: Record<string, unknown>): string {
  const params = new URLSearchParams();
  const add = (name: string, value: unknown): void => {
    if (value === undefined || value === null) return;
    if (Array.isArray(value)) for (const each of value) add(name, each);
    else if (typeof value === 'object')
      for (const [key, inner] of Object.entries(value)) add(`${name}[${key}]`, inner);
    else if (typeof value === 'string' || typeof value === 'number' || typeof value === 'boolean')
      params.append(name, String(value));
  };
  for (const [name, value] of Object.entries(query)) add(name, value);
  return params.toString();
}

/** A failed call, thrown by `unwrap`: the status and, when the service sent one, its problem. */
export class ApiProblemError extends Error {
  constructor(
    readonly status: number,
    readonly problem: Problem | undefined,
  ) {
    super(
      problem
        ? `${problem.status} ${problem.code}: ${problem.detail} (trace ${problem.traceId})`
        : `HTTP ${status} without a problem body`,
    );
    this.name = 'ApiProblemError';
  }
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

/**
 * The error body as a Problem when it is one. openapi-fetch hands over whatever the body was
 * (a proxy's HTML page too), so the members are checked rather than trusted.
 */
export function problemOf(body: unknown): Problem | undefined {
  return typeof body === 'object' && body !== null && isProblem(body) ? body : undefined;
}

function isProblem(body: object): body is Problem {
  const fields: Record<string, unknown> = { ...body };
  return (
    typeof fields.code === 'string' &&
    typeof fields.status === 'number' &&
    typeof fields.detail === 'string' &&
    typeof fields.title === 'string'
  );
}
