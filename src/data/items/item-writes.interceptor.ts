import {
  Injectable,
  type CallHandler,
  type ExecutionContext,
  type NestInterceptor,
} from '@nestjs/common';
import type { Observable } from 'rxjs';
import type { RequestWithPrincipal } from '../../auth';
import { onWriteRoutes } from '../../common/http/write-routes';
import { CollectionWriteGate } from '../collections/collection-write.gate';

/**
 * The write routes of items: the collection's move gate (CollectionWriteGate) around the
 * handling. A write's schema warnings are not its concern: the handler sets the
 * `Schema-Warnings` header from what the write returns (schema-warnings.ts).
 */
@Injectable()
export class ItemWritesInterceptor implements NestInterceptor {
  constructor(private readonly gate: CollectionWriteGate) {}

  intercept(context: ExecutionContext, next: CallHandler): Observable<unknown> {
    return this.gate.gated(
      context.switchToHttp().getRequest<RequestWithPrincipal>(),
      next.handle(),
    );
  }
}

/**
 * On a controller whose routes write items: the move gate, on its write routes only (reads stay
 * without an interceptor, on their fast path).
 */
export const ItemWriteRoutes = (): ClassDecorator => onWriteRoutes(ItemWritesInterceptor);
