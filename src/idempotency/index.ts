export { IdempotencyModule, type IdempotencyModuleOptions } from './idempotency.module';
export { IdempotentWrites } from './idempotent-writes';
export { IdempotencyInterceptor } from './idempotency.interceptor';
export { IdempotencySweeper } from './idempotency.sweeper';
export { addIdempotencyKeys } from './idempotency.openapi';
export type { IdempotencyScope } from './idempotency-key';
export { IDEMPOTENCY_STORES, type IdempotencyStores } from './idempotency-stores';
export { IdempotencyRecordSchema } from './idempotency-record.schema';
