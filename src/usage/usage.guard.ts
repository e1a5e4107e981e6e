import { Inject, Injectable, type CanActivate, type ExecutionContext } from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import type { Request, Response } from 'express';
import type { Socket } from 'node:net';
import type { Tenant } from '../common/tenancy/namespace';
import { METERED_AS, type MeteredClass } from './metered-as';
import type { RequestClass, UsageCounts } from './usage-counts';
import { UsageMeter } from './usage-meter';

/** Whose usage a request is (the composition root binds it to the auth principal); null: nobody's. */
export type UsageTenantResolver = (req: Request) => Tenant | null;
export const USAGE_TENANT = Symbol('USAGE_TENANT');

/**
 * Counts every request a route handles for the tenant of its principal: one in its class as the
 * route starts (so a client that has its answer knows it is counted), then, once the response
 * has ended (sent, or cut), its bytes on the connection and a stream's open time. Requests
 * without a tenant (the operator's; those refused before a route runs: no key, a wrong one, a
 * missing scope, the rate limit, a collection outside the key's) are not counted. Bytes are
 * what the connection carried, headers included: out, what was written to it since the route
 * started; in, what was read from it since the last counted response on it ended.
 *
 * A guard that never refuses, after the global guards that may (AppModule lists them: the key's
 * guard, the rate limit, the collection limit, then this, then the Idempotency-Key's, which
 * answers a repeat itself and so counts as served), so that it counts exactly what they
 * admitted. Not an interceptor: NestJS runs every route that has one through an rxjs pipeline
 * with AsyncResource bindings, which as a global interceptor cost every GET about 7 % of its CPU
 * (docs/benchmarks.md, "Metering without an interceptor"), while guards are called directly.
 */
@Injectable()
export class UsageGuard implements CanActivate {
  /** Per connection, how many bytes had been read when its last counted response ended. */
  private readonly readUntil = new WeakMap<Socket, number>();
  private readonly classes = new WeakMap<object, MeteredClass | null>();

  constructor(
    private readonly meter: UsageMeter,
    private readonly reflector: Reflector,
    @Inject(USAGE_TENANT) private readonly tenantOf: UsageTenantResolver,
  ) {}

  /** Never refuses: it only counts what the guards before it admitted. */
  canActivate(context: ExecutionContext): true {
    if (!this.meter.enabled || context.getType() !== 'http') return true;
    const http = context.switchToHttp();
    const req = http.getRequest<Request>();
    const tenant = this.tenantOf(req);
    if (!tenant) return true;
    const res = http.getResponse<Response>();
    const requestClass = this.classOf(context, req);
    const { socket } = req;
    const started = Date.now();
    const writtenBefore = socket.bytesWritten;
    this.meter.add(tenant, { [requestClass]: 1 });
    res.once('close', () => {
      const read = socket.bytesRead;
      const counts: Partial<UsageCounts> = {
        bytesIn: read - (this.readUntil.get(socket) ?? 0),
        bytesOut: socket.bytesWritten - writtenBefore,
      };
      this.readUntil.set(socket, read);
      if (requestClass === 'stream') counts.streamMs = Date.now() - started;
      this.meter.add(tenant, counts);
    });
    return true;
  }

  /** The route's @MeteredAs, read once per route; else GET and HEAD read, the rest write. */
  private classOf(context: ExecutionContext, req: Request): RequestClass {
    const handler = context.getHandler();
    let metered = this.classes.get(handler);
    if (metered === undefined) {
      metered =
        this.reflector.getAllAndOverride<MeteredClass | undefined>(METERED_AS, [
          handler,
          context.getClass(),
        ]) ?? null;
      this.classes.set(handler, metered);
    }
    if (typeof metered === 'function') return metered(req);
    if (metered !== null) return metered;
    return req.method === 'GET' || req.method === 'HEAD' ? 'read' : 'write';
  }
}
