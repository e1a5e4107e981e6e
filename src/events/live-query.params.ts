import {
  createParamDecorator,
  Injectable,
  type CallHandler,
  type ExecutionContext,
  type NestInterceptor,
} from '@nestjs/common';
import type { Request } from 'express';
import type { Observable } from 'rxjs';
import { isLiveParam } from './dto/live-query.openapi';

/** A request's live query parameters, set aside by LiveQueryParamsInterceptor. */
const liveParams = new WeakMap<Request, Record<string, unknown>>();

/**
 * Sets a live query's `filter[…]` and `fields` parameters aside before the feed's own query DTO
 * is validated (whitelisted: any other key is a 400), so each part is read by its own rules: the
 * DTO by the ValidationPipe, the filter by the data module's query language (LiveParams).
 */
@Injectable()
export class LiveQueryParamsInterceptor implements NestInterceptor {
  intercept(context: ExecutionContext, next: CallHandler): Observable<unknown> {
    const req = context.switchToHttp().getRequest<Request>();
    const own: Record<string, unknown> = {};
    const live: Record<string, unknown> = {};
    for (const [key, value] of Object.entries(req.query as Record<string, unknown>))
      (isLiveParam(key) ? live : own)[key] = value;
    // Express 5 parses `req.query` at every read: the request gets its own, without them.
    Object.defineProperty(req, 'query', { value: own, configurable: true, enumerable: true });
    liveParams.set(req, live);
    return next.handle();
  }
}

/** The live query parameters LiveQueryParamsInterceptor set aside (empty: none). */
export const LiveParams = createParamDecorator(
  (_: unknown, context: ExecutionContext): Record<string, unknown> =>
    liveParams.get(context.switchToHttp().getRequest<Request>()) ?? {},
);
