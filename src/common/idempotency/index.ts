export { IdempotencyModule, type IdempotencyModuleOptions } from './idempotency.module';
export { IdempotencySweeper } from './idempotency.sweeper';
export { addIdempotencyKeys } from './idempotency.openapi';
export type { IdempotencyScope } from './idempotency-key';
