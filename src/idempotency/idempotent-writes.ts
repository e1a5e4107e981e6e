import { onWriteRoutes } from '../common/http/write-routes';
import { IdempotencyInterceptor } from './idempotency.interceptor';

/**
 * Puts IdempotencyInterceptor on every write route of the controller (the methods that may take
 * an Idempotency-Key; the interceptor decides which do), and on nothing else. It is not global on
 * purpose: NestJS runs any route that has an interceptor through an rxjs pipeline with
 * AsyncResource bindings, about 3 % of the CPU of a GET (bench:profile), while a route without
 * one is called directly. Every controller with write routes carries this decorator (checked by
 * test/e2e/idempotency.e2e-spec.ts over every route of the app).
 */
export function IdempotentWrites(): ClassDecorator {
  return onWriteRoutes(IdempotencyInterceptor);
}
