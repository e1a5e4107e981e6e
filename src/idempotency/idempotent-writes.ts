import { RequestMethod, UseInterceptors } from '@nestjs/common';
import { METHOD_METADATA } from '@nestjs/common/constants';
import { IdempotencyInterceptor } from './idempotency.interceptor';

/** The route methods that write: POST, PUT, PATCH and DELETE. */
export const WRITE_METHODS: ReadonlySet<RequestMethod> = new Set([
  RequestMethod.POST,
  RequestMethod.PUT,
  RequestMethod.PATCH,
  RequestMethod.DELETE,
]);

/**
 * Puts IdempotencyInterceptor on every write route of the controller (WRITE_METHODS: the methods
 * that may take an Idempotency-Key; the interceptor decides which do), and on nothing else. It is
 * the one interceptor a controller carries, so no order among decorators means anything. It is
 * not global on purpose: NestJS runs any route that has an interceptor through an rxjs pipeline
 * with AsyncResource bindings, about 3 % of the CPU of a GET (bench:profile), while a route
 * without one is called directly. Every controller with write routes carries this decorator
 * (checked by test/e2e/idempotency.e2e-spec.ts over every route of the app).
 */
export function IdempotentWrites(): ClassDecorator {
  return (target) => {
    const prototype = (target as unknown as { prototype: object }).prototype;
    for (const name of Object.getOwnPropertyNames(prototype)) {
      const descriptor = Object.getOwnPropertyDescriptor(prototype, name);
      const handler: unknown = descriptor?.value;
      if (!descriptor || typeof handler !== 'function') continue;
      const method = Reflect.getMetadata(METHOD_METADATA, handler) as RequestMethod | undefined;
      if (method !== undefined && WRITE_METHODS.has(method))
        UseInterceptors(IdempotencyInterceptor)(prototype, name, descriptor);
    }
  };
}
