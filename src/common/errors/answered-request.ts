import type { Response } from 'express';

/**
 * Thrown by a guard that answers a request itself, in place of its handler (a kept response of
 * an idempotent request, replayed): the problem filter writes the answer this carries instead of
 * a problem. A guard has no other way to end a request with a response of its own choosing; an
 * interceptor does, but NestJS runs every route with one through an rxjs pipeline.
 */
export class AnsweredRequest extends Error {
  constructor(readonly answer: (res: Response) => void) {
    super('the request was answered before its handler');
    this.name = 'AnsweredRequest';
  }
}
