import {
  Inject,
  Injectable,
  type CallHandler,
  type ExecutionContext,
  type NestInterceptor,
} from '@nestjs/common';
import type { Request, Response } from 'express';
import { of, type Observable } from 'rxjs';
import { APP_CONFIG, type AppConfig } from '../config';
import { traceIdOf } from '../common/errors';
import {
  fingerprintOf,
  IDEMPOTENT_REPLAYED_HEADER,
  openApiPath,
  parseIdempotencyKey,
  recordIdOf,
  responseKeyOf,
  takesIdempotencyKey,
  type IdempotencyScope,
} from './idempotency-key';
import { IDEMPOTENCY_STORES, type IdempotencyStores } from './idempotency-stores';
import { IdempotencyService, type Admission } from './idempotency.service';
import { holdResponse } from './response-capture';
import type { StoredResponse } from './sealed-response';

/** Who a request's keys belong to; null when it has no principal (a public route). */
export type IdempotencyScopeResolver = (req: Request) => IdempotencyScope | null;
export const IDEMPOTENCY_SCOPE = Symbol('IDEMPOTENCY_SCOPE');
/** The names of the headers a kept response keeps (keptHeaderNames). */
export const IDEMPOTENCY_KEPT_HEADERS = Symbol('IDEMPOTENCY_KEPT_HEADERS');

/**
 * Idempotency-Key on the operations that take it (takesIdempotencyKey). An interceptor on every
 * write route (@IdempotentWrites()), so it runs after the guards — the principal is known and the
 * rate limit has counted the request — and before the pipes and the handler, which a repeat never
 * reaches.
 */
@Injectable()
export class IdempotencyInterceptor implements NestInterceptor {
  private readonly maxResponseBytes: number;

  constructor(
    private readonly idempotency: IdempotencyService,
    @Inject(IDEMPOTENCY_SCOPE) private readonly scopeOf: IdempotencyScopeResolver,
    @Inject(IDEMPOTENCY_STORES) private readonly stores: IdempotencyStores,
    @Inject(IDEMPOTENCY_KEPT_HEADERS) private readonly keptHeaders: readonly string[],
    @Inject(APP_CONFIG) config: AppConfig,
  ) {
    this.maxResponseBytes = config.idempotency.maxResponseBytes;
  }

  async intercept(context: ExecutionContext, next: CallHandler): Promise<Observable<unknown>> {
    if (context.getType() !== 'http') return next.handle();
    const http = context.switchToHttp();
    const req = http.getRequest<Request>();
    const header = req.headers['idempotency-key'];
    if (header === undefined || !takesIdempotencyKey(req.method, routePathOf(req))) {
      return next.handle();
    }
    const key = parseIdempotencyKey(header);
    const scope = this.scopeOf(req);
    if (scope === null) return next.handle();

    const request = {
      recordId: recordIdOf(scope, key),
      responseKey: responseKeyOf(scope, key),
      fingerprint: fingerprintOf({
        method: req.method,
        path: (req.originalUrl ?? req.url).split('?')[0] ?? '',
        query: req.query,
        ifMatch: req.headers['if-match'],
        body: req.body as unknown,
      }),
      tenant: scope.tenant,
    };
    // The tenant's records stay where they are from the admission until the outcome is kept.
    const release = await this.stores.hold(scope.tenant);
    let admission: Admission;
    try {
      admission = await this.idempotency.admit(request);
    } catch (error) {
      await release();
      throw error;
    }
    const res = http.getResponse<Response>();
    if (admission.kind === 'replay') {
      await release();
      return of(replay(res, admission.response));
    }
    const { claim } = admission;
    holdResponse(res, this.maxResponseBytes, this.keptHeaders, async (response) => {
      try {
        await this.idempotency.settle(claim, response, traceIdOf(req));
      } finally {
        await release();
      }
    });
    return next.handle();
  }
}

/** The route's path as OpenAPI writes it; '' where no route matched. */
function routePathOf(req: Request): string {
  const path = (req.route as { path?: unknown } | undefined)?.path;
  return typeof path === 'string' ? openApiPath(path) : '';
}

/**
 * Sends a kept response again: its status, its headers and its body byte for byte (a string
 * leaves Nest's reply as it is; the kept Content-Type stays). The request's own X-Request-Id and
 * rate-limit headers are this request's.
 */
function replay(res: Response, response: StoredResponse): string | undefined {
  res.status(response.status);
  for (const [name, value] of Object.entries(response.headers)) res.setHeader(name, value);
  res.setHeader(IDEMPOTENT_REPLAYED_HEADER, 'true');
  return response.body.length === 0 ? undefined : response.body.toString('utf8');
}
