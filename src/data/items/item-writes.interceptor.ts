import {
  Injectable,
  type CallHandler,
  type ExecutionContext,
  type NestInterceptor,
} from '@nestjs/common';
import type { Response } from 'express';
import type { Observable } from 'rxjs';
import type { RequestWithPrincipal } from '../../auth';
import { onWriteRoutes } from '../../common/http/write-routes';
import { CollectionWriteGate } from '../collections/collection-write.gate';
import { answeringWarnings } from '../rules/schema/schema-warnings';

/**
 * The write routes of items, in one interceptor: the collection's move gate
 * (CollectionWriteGate) around the handling, and the handling's schema warnings answered in the
 * `Schema-Warnings` header (schema-warnings.ts). One rather than two: NestJS binds an
 * `AsyncResource` and builds an rxjs stage for every interceptor of a route, on every request.
 */
@Injectable()
export class ItemWritesInterceptor implements NestInterceptor {
  constructor(private readonly gate: CollectionWriteGate) {}

  intercept(context: ExecutionContext, next: CallHandler): Observable<unknown> {
    const http = context.switchToHttp();
    const req = http.getRequest<RequestWithPrincipal>();
    return this.gate.gated(
      req,
      answeringWarnings(req.principal, http.getResponse<Response>(), next.handle()),
    );
  }
}

/**
 * On a controller whose routes write items: the move gate and the Schema-Warnings header, on its
 * write routes only (reads stay without an interceptor, on their fast path). Put it below
 * IdempotentWrites: it then wraps the idempotency interceptor, and the header is set before a
 * response is kept for replay.
 */
export const ItemWriteRoutes = (): ClassDecorator => onWriteRoutes(ItemWritesInterceptor);
