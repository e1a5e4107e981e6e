export { IdempotencyModule, type IdempotencyModuleOptions } from './idempotency.module';
export { IdempotencyGuard } from './idempotency.guard';
export { IdempotencySweeper } from './idempotency.sweeper';
export { addIdempotencyKeys } from './idempotency.openapi';
export type { IdempotencyScope } from './idempotency-key';
export { IDEMPOTENCY_STORES, type IdempotencyStores } from './idempotency-stores';
export { IdempotencyRecordSchema } from './idempotency-record.schema';
