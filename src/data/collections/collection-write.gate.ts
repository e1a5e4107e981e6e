import {
  Injectable,
  type CallHandler,
  type ExecutionContext,
  type NestInterceptor,
} from '@nestjs/common';
import { defer, finalize, mergeMap, type Observable } from 'rxjs';
import {
  tenantOf,
  type CustomerPrincipal,
  type RequestWithPrincipal,
  type Tenant,
} from '../../auth';
import { onWriteRoutes } from '../../common/http/write-routes';
import { CollectionMovingError } from '../data.errors';
import { CollectionRegistryRepository } from './collection-registry.repository';
import { MoveWriteMarkers } from '../../placement';

/**
 * The write side of a tenant move, on every write route of `/data/{collection}…`. Outside a
 * move it costs nothing: the entry comes from the registry cache the handler reads too. While
 * the collection is being moved, the write first marks itself under way, then reads the entry
 * afresh: paused → 503 COLLECTION_MOVING with Retry-After; otherwise the write goes on, and the
 * move cannot pause, compare or switch the collection until the marker is gone (CollectionMover).
 */
@Injectable()
export class CollectionWriteGate implements NestInterceptor {
  constructor(
    private readonly registry: CollectionRegistryRepository,
    private readonly markers: MoveWriteMarkers,
  ) {}

  intercept(context: ExecutionContext, next: CallHandler): Observable<unknown> {
    return this.gated(context.switchToHttp().getRequest<RequestWithPrincipal>(), next.handle());
  }

  /** `answered` (a request's handling) behind the gate of the collection its route names. */
  gated(req: RequestWithPrincipal, answered: Observable<unknown>): Observable<unknown> {
    const principal = req.principal;
    const name = (req.params as Record<string, string | undefined>).collection;
    if (!principal || principal.kind === 'operator' || name === undefined) return answered;
    const tenant = tenantOf(principal);
    return defer(() => this.enter(tenant, principal.branch, name)).pipe(
      mergeMap((marker) =>
        marker === null
          ? answered
          : answered.pipe(finalize(() => void this.markers.end(marker).catch(() => {}))),
      ),
    );
  }

  /** Runs a write of `name` that no route names (an import's): the same gate, around it. */
  around<T>(principal: CustomerPrincipal, name: string, write: () => Promise<T>): Promise<T> {
    return this.aroundIn(tenantOf(principal), principal.branch, name, write);
  }

  /** `around` for a write no request makes (the expiry sweep's), in a namespace. */
  async aroundIn<T>(tenant: Tenant, branch: string, name: string, write: () => Promise<T>) {
    const marker = await this.enter(tenant, branch, name);
    try {
      return await write();
    } finally {
      if (marker !== null) await this.markers.end(marker).catch(() => {});
    }
  }

  /** The marker of this write when the collection is being moved; null otherwise. */
  private async enter(tenant: Tenant, branch: string, name: string): Promise<string | null> {
    const entry = await this.registry.find(tenant, branch, name);
    if (!entry?.moving) return null;
    const marker = await this.markers.begin(entry.id);
    const now = await this.registry.find(tenant, branch, name, { fresh: true });
    if (now?.moving?.phase === 'paused') {
      await this.markers.end(marker);
      throw new CollectionMovingError(name);
    }
    return marker;
  }
}

/** CollectionWriteGate on every write route of a data controller. */
export function MovableCollectionWrites(): ClassDecorator {
  return onWriteRoutes(CollectionWriteGate);
}
