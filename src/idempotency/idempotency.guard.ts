import { Inject, Injectable, type CanActivate, type ExecutionContext } from '@nestjs/common';
import type { Request, Response } from 'express';
import { APP_CONFIG, type AppConfig } from '../config';
import { AnsweredRequest, traceIdOf } from '../common/errors';
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
 * Idempotency-Key on the operations that take it (takesIdempotencyKey, by the route's method and
 * path). The last of the global guards (AppModule lists them in order): it runs once the
 * principal is known and the rate limit, the collection limit and the metering have had the
 * request, and before the pipes and the handler, which a repeat never reaches — it is answered
 * with the kept response (AnsweredRequest). A guard rather than an interceptor: NestJS runs every
 * route that has an interceptor through an rxjs pipeline with AsyncResource bindings, which cost
 * every write about 7 % of its CPU (bench:profile) whether it sent a key or not; a request without
 * a key costs this guard one header lookup.
 */
@Injectable()
export class IdempotencyGuard implements CanActivate {
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

  /** Synchronous for a request without a key (every read among them): no promise to wait for. */
  canActivate(context: ExecutionContext): boolean | Promise<boolean> {
    if (context.getType() !== 'http') return true;
    const http = context.switchToHttp();
    const req = http.getRequest<Request>();
    const header = req.headers['idempotency-key'];
    if (header === undefined || !takesIdempotencyKey(req.method, routePathOf(req))) return true;
    const key = parseIdempotencyKey(header);
    const scope = this.scopeOf(req);
    if (scope === null) return true;
    return this.admit(req, http.getResponse<Response>(), scope, key);
  }

  /**
   * Claims the key for this request, whose response is then kept when it ends; or answers a
   * repeat with the kept response instead of the handler (AnsweredRequest).
   */
  private async admit(
    req: Request,
    res: Response,
    scope: IdempotencyScope,
    key: string,
  ): Promise<boolean> {
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
    if (admission.kind === 'replay') {
      await release();
      const { response } = admission;
      throw new AnsweredRequest((answered) => replay(answered, response));
    }
    const { claim } = admission;
    holdResponse(res, this.maxResponseBytes, this.keptHeaders, async (response) => {
      try {
        await this.idempotency.settle(claim, response, traceIdOf(req));
      } finally {
        await release();
      }
    });
    return true;
  }
}

/** The route's path as OpenAPI writes it; '' where no route matched. */
function routePathOf(req: Request): string {
  const path = (req.route as { path?: unknown } | undefined)?.path;
  return typeof path === 'string' ? openApiPath(path) : '';
}

/**
 * Sends a kept response again: its status, its headers and its body byte for byte (sent as a
 * string, as NestJS's Express adapter sends one: the kept Content-Type stays). The request's own
 * X-Request-Id and rate-limit headers are this request's.
 */
function replay(res: Response, response: StoredResponse): void {
  res.status(response.status);
  for (const [name, value] of Object.entries(response.headers)) res.setHeader(name, value);
  res.setHeader(IDEMPOTENT_REPLAYED_HEADER, 'true');
  if (response.body.length === 0) res.send();
  else res.send(response.body.toString('utf8'));
}
