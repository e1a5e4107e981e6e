import type { Test } from 'supertest';
import { TEST_ADMIN_KEY, type TestApp } from './app';

/** An API key, or anything that carries one (TestUser, TestTeam, TestSubProfile). */
export type KeyHolder = string | { apiKey: string };

export interface RequestOptions {
  /** Query parameters, added to any query string already in the path. */
  query?: Record<string, string>;
  /** Sent as X-Branch when given (also when empty). */
  branch?: string;
  /** Further request headers, e.g. `{ Authorization: 'Bearer …' }`. */
  headers?: Record<string, string>;
}

/**
 * Requests sent as one principal. Each method returns the supertest `Test`, so callers chain
 * `.expect(…)` or await the response as usual. A body of `undefined` sends no body at all.
 */
export interface Client {
  get(path: string, options?: RequestOptions): Test;
  post(path: string, body?: unknown, options?: RequestOptions): Test;
  put(path: string, body?: unknown, options?: RequestOptions): Test;
  delete(path: string, body?: unknown, options?: RequestOptions): Test;
  /**
   * Sends `json` verbatim as application/json, for bodies `JSON.stringify` cannot produce
   * (`__proto__` keys, nesting deeper than the stack) or that are not objects.
   */
  raw(
    method: 'post' | 'put' | 'delete',
    path: string,
    json: string,
    options?: RequestOptions,
  ): Test;
}

function keyOf(holder: KeyHolder): string {
  return typeof holder === 'string' ? holder : holder.apiKey;
}

/** A client sending `key` as X-Api-Key; `null` sends no key at all. */
export function as(t: TestApp, key: KeyHolder | null): Client {
  const start = (
    method: 'get' | 'post' | 'put' | 'delete',
    path: string,
    options: RequestOptions = {},
  ): Test => {
    const req = t.http()[method](path);
    if (key !== null) void req.set('X-Api-Key', keyOf(key));
    if (options.branch !== undefined) void req.set('X-Branch', options.branch);
    if (options.headers) void req.set(options.headers);
    if (options.query) void req.query(options.query);
    return req;
  };
  const withBody = (req: Test, body: unknown): Test =>
    body === undefined ? req : req.send(body as string | object);
  return {
    get: (path, options) => start('get', path, options),
    post: (path, body, options) => withBody(start('post', path, options), body),
    put: (path, body, options) => withBody(start('put', path, options), body),
    delete: (path, body, options) => withBody(start('delete', path, options), body),
    raw: (method, path, json, options) =>
      start(method, path, options).set('Content-Type', 'application/json').send(json),
  };
}

/** A client without any key. */
export function anonymous(t: TestApp): Client {
  return as(t, null);
}

/** A client holding the operator key (ADMIN_API_KEY). */
export function asOperator(t: TestApp): Client {
  return as(t, TEST_ADMIN_KEY);
}
