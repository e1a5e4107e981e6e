import { Module, type DynamicModule, type Type } from '@nestjs/common';
import { MongooseModule } from '@nestjs/mongoose';
import {
  IDEMPOTENCY_KEPT_HEADERS,
  IDEMPOTENCY_SCOPE,
  IdempotencyGuard,
  type IdempotencyScopeResolver,
} from './idempotency.guard';
import { IdempotencyRecordDocument, IdempotencyRecordSchema } from './idempotency-record.schema';
import { IDEMPOTENCY_STORES, type IdempotencyStores } from './idempotency-stores';
import { IdempotencyRepository } from './idempotency.repository';
import { IdempotencyService } from './idempotency.service';
import { IdempotencySweeper } from './idempotency.sweeper';
import { keptHeaderNames } from './response-capture';

export interface IdempotencyModuleOptions {
  /** Who a request's keys belong to (the composition root binds it to the auth principal). */
  scopeOf: IdempotencyScopeResolver;
  /** Where records live: a provider of IdempotencyStores that a global module exports. */
  stores: Type<IdempotencyStores>;
  /**
   * The headers the routes add to an outcome, kept and replayed with it besides Content-Type,
   * ETag, Location and Link (the data routes' Schema-Warnings); a repeat answers them as the
   * first request did.
   */
  keptHeaders?: readonly string[];
}

/**
 * Idempotency-Key for every POST and for PUT/DELETE of projects and data items: the guard (the
 * composition root registers it as the last global guard; it decides by the route), its records
 * and their sweeper. See docs/requests.md, "Idempotent requests".
 */
@Module({})
export class IdempotencyModule {
  static forRoot(options: IdempotencyModuleOptions): DynamicModule {
    return {
      module: IdempotencyModule,
      imports: [
        MongooseModule.forFeature([
          { name: IdempotencyRecordDocument.name, schema: IdempotencyRecordSchema },
        ]),
      ],
      providers: [
        IdempotencyRepository,
        IdempotencyService,
        IdempotencySweeper,
        { provide: IDEMPOTENCY_SCOPE, useValue: options.scopeOf },
        { provide: IDEMPOTENCY_STORES, useExisting: options.stores },
        { provide: IDEMPOTENCY_KEPT_HEADERS, useValue: keptHeaderNames(options.keptHeaders ?? []) },
        IdempotencyGuard,
      ],
      exports: [IdempotencyGuard],
    };
  }
}
