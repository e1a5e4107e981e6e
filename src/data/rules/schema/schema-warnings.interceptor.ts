import {
  Injectable,
  type CallHandler,
  type ExecutionContext,
  type NestInterceptor,
} from '@nestjs/common';
import type { Response } from 'express';
import { onWriteRoutes } from '../../../common/idempotency';
import { Observable, tap } from 'rxjs';
import type { SchemaError } from './item-schemas';
import { gatheringWarnings, schemaWarningsHeader } from './schema-warnings';

/** The response header that lists where a written item breaks a `warn` schema. */
export const SCHEMA_WARNINGS_HEADER = 'Schema-Warnings';

/**
 * Gathers the schema warnings of the writes a data request makes and answers them in the
 * `Schema-Warnings` header (schema-warnings.ts says its form).
 */
@Injectable()
export class SchemaWarningsInterceptor implements NestInterceptor {
  intercept(context: ExecutionContext, next: CallHandler): Observable<unknown> {
    const res = context.switchToHttp().getResponse<Response>();
    const warnings: SchemaError[] = [];
    const answered = next.handle().pipe(
      tap(() => {
        const header = schemaWarningsHeader(warnings);
        if (header !== null && !res.headersSent) res.setHeader(SCHEMA_WARNINGS_HEADER, header);
      }),
    );
    // Subscribed inside the request's list: the interceptors after this one (and the handler)
    // start from the subscription, so their writes note into it.
    return new Observable((subscriber) =>
      gatheringWarnings(warnings, () => answered.subscribe(subscriber)),
    );
  }
}

/**
 * On a controller whose routes write items: their answers carry Schema-Warnings. Only its write
 * routes get the interceptor (onWriteRoutes), so reads stay without one, on their fast path.
 * Put it below IdempotentWrites: it then wraps the idempotency interceptor, and the header is
 * set before a response is kept for replay.
 */
export const AnswersSchemaWarnings = (): ClassDecorator => onWriteRoutes(SchemaWarningsInterceptor);
