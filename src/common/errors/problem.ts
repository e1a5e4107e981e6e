import type { Request, Response } from 'express';
import { problemType, type ErrorEntry } from './error-entry';
import type { FieldError } from './domain-error';

/** RFC 9457 problem details, with the service's `code`, `traceId` and optional `errors` members. */
export interface Problem {
  type: string;
  title: string;
  status: number;
  detail: string;
  instance: string;
  code: string;
  traceId: string;
  errors?: FieldError[];
  [extension: string]: unknown;
}

export const PROBLEM_CONTENT_TYPE = 'application/problem+json';

/**
 * The request's trace id when tracing is on, else its request id (echoed from X-Request-Id or
 * generated); requestIdOf in common/http/logger.ts sets both.
 */
export function traceIdOf(req: Request): string {
  const { id, traceId } = req as Request & { id?: unknown; traceId?: unknown };
  if (typeof traceId === 'string') return traceId;
  return typeof id === 'string' || typeof id === 'number' ? String(id) : '';
}

export function buildProblem(
  req: Request,
  { code, status, title }: ErrorEntry,
  detail: string,
  errors?: FieldError[],
  extensions?: Record<string, unknown>,
): Problem {
  return {
    ...extensions,
    type: problemType(code),
    title,
    status,
    detail,
    instance: (req.originalUrl ?? req.url ?? '').split('?')[0] ?? '',
    code,
    traceId: traceIdOf(req),
    ...(errors && errors.length > 0 ? { errors } : {}),
  };
}

export function sendProblem(res: Response, problem: Problem): void {
  if (res.headersSent) return;
  res.status(problem.status).type(PROBLEM_CONTENT_TYPE).send(JSON.stringify(problem));
}
