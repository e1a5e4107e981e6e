import type { ClientOptions } from 'openapi-fetch';
import type { components } from './schema.js';

/** The RFC 9457 problem every error response carries (`application/problem+json`). */
export type Problem = components['schemas']['ProblemDto'];

/** Its stable machine-readable `code`. */
export type ProblemCode = Problem['code'];

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
  /**
   * The team a member's root key acts for, sent as `X-Team` on every request (team resources
   * then answer for that team). Leave it out to act as the key's own owner.
   */
  team?: string;
  /** A fetch implementation other than the global one (tests, instrumentation). */
  fetch?: ClientOptions['fetch'];
}

/** The headers every request sends: the key and, when given, the branch and the team. */
export function apiHeaders(options: ApiClientOptions): Record<string, string> {
  const headers: Record<string, string> = { 'X-Api-Key': options.apiKey };
  if (options.branch !== undefined) headers['X-Branch'] = options.branch;
  if (options.team !== undefined && options.team !== '') headers['X-Team'] = options.team;
  return headers;
}

/** The base URL without trailing slashes, so that a path can follow it. */
export function baseUrlOf(options: ApiClientOptions): string {
  return options.baseUrl.replace(/\/+$/, '');
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

/** A failed response as an ApiProblemError, with its problem when the body is one. */
export async function problemErrorOf(response: Response): Promise<ApiProblemError> {
  const body: unknown = await response.json().catch(() => undefined);
  return new ApiProblemError(response.status, problemOf(body));
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
