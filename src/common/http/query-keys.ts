import type { NextFunction, Request, Response } from 'express';
import { unescape as unescapeQuery } from 'node:querystring';
import {
  InvalidQueryError,
  ValidationFailedError,
  type DomainError,
  type FieldError,
  type ProblemRenderer,
} from '../errors';

/** Names that reach an object's prototype machinery when used as a key. */
const PROTOTYPE_NAMES: ReadonlySet<string> = new Set(['__proto__', 'constructor', 'prototype']);

/** Query keys are split into segments on these: `filter[a]`, `after[b]`, dotted paths `a.b`. */
const SEGMENT_SEPARATOR = /[[\].]/;

/**
 * node:querystring (Express's 'simple' parser) keeps only the first 1000 pairs and drops the
 * rest without a word; a request with more is refused so that no filter is silently lost.
 */
export const MAX_QUERY_PARAMETERS = 1000;

/** True when a segment of the key is `__proto__`, `constructor` or `prototype`. */
export function isPrototypeKey(key: string): boolean {
  return key.split(SEGMENT_SEPARATOR).some((segment) => PROTOTYPE_NAMES.has(segment));
}

/** The problem entry for a prototype key, or null when the key is acceptable. */
export function prototypeKeyProblem(key: string): FieldError | null {
  return isPrototypeKey(key)
    ? {
        field: key,
        message: 'must not be or contain __proto__, constructor or prototype (reserved names)',
      }
    : null;
}

/** The query string of a request URL (without `?` and any fragment); '' when there is none. */
export function rawQueryString(url: string): string {
  const start = url.indexOf('?');
  if (start < 0) return '';
  const hash = url.indexOf('#', start);
  return url.slice(start + 1, hash < 0 ? undefined : hash);
}

/**
 * Every key of a query string, decoded exactly as node:querystring decodes keys (`+` is a space,
 * percent escapes are decoded, malformed ones kept), repeats included. Read from the raw string,
 * not from a parsed object, so that no parser setting can hide a key from the check.
 */
export function rawQueryKeys(query: string): string[] {
  if (query === '') return [];
  return query
    .split('&')
    .filter((pair) => pair !== '')
    .map((pair) => {
      const eq = pair.indexOf('=');
      return unescapeQuery((eq < 0 ? pair : pair.slice(0, eq)).replace(/\+/g, ' '));
    });
}

/**
 * The query-string problems every route shares: too many parameters (INVALID_QUERY) or keys
 * with a prototype name (VALIDATION_FAILED, one entry per distinct key); null when there are none.
 */
export function queryKeyError(url: string): DomainError | null {
  const query = rawQueryString(url);
  if (query === '') return null;
  // Empty pairs count toward node:querystring's limit too, so count separators, not keys.
  if (query.split('&').length > MAX_QUERY_PARAMETERS) {
    return new InvalidQueryError(
      `The query string has more than ${MAX_QUERY_PARAMETERS} parameters.`,
    );
  }
  const errors: FieldError[] = [];
  for (const key of new Set(rawQueryKeys(query))) {
    const problem = prototypeKeyProblem(key);
    if (problem) errors.push(problem);
  }
  return errors.length > 0 ? new ValidationFailedError(errors) : null;
}

/**
 * Express middleware in front of every route: the 'simple' query parser yields `__proto__` as
 * an ordinary key, and any code that copies it into a plain object drops it silently (widening a
 * filter), so such keys are refused here, before routing, on every route alike.
 */
export function queryKeyGuard(renderer: ProblemRenderer) {
  return (req: Request, res: Response, next: NextFunction): void => {
    const error = queryKeyError(req.url);
    if (error) {
      renderer.send(error, req, res);
      return;
    }
    next();
  };
}
