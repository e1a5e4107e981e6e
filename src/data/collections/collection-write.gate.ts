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
import { MoveGate, MoveWriteMarkers } from '../../placement';

/** A collection, as a write names it. */
interface CollectionAddress {
  tenant: Tenant;
  branch: string;
  name: string;
}

/**
 * The move gate (MoveGate) of a collection, on every write route of `/data/{collection}…` and
 * around the writes no route names (imports, the expiry sweep). Outside a move it costs nothing:
 * the entry comes from the registry cache the handler reads too. While the collection is being
 * moved, a write marks itself under the collection's registry id; while its writes are paused,
 * 503 COLLECTION_MOVING (CollectionMover pauses, compares and switches).
 */
@Injectable()
export class CollectionWriteGate extends MoveGate<CollectionAddress> implements NestInterceptor {
  constructor(
    private readonly registry: CollectionRegistryRepository,
    markers: MoveWriteMarkers,
  ) {
    super(markers);
  }

  intercept(context: ExecutionContext, next: CallHandler): Observable<unknown> {
    return this.gated(context.switchToHttp().getRequest<RequestWithPrincipal>(), next.handle());
  }

  /** `answered` (a request's handling) behind the gate of the collection its route names. */
  gated(req: RequestWithPrincipal, answered: Observable<unknown>): Observable<unknown> {
    const principal = req.principal;
    const name = (req.params as Record<string, string | undefined>).collection;
    if (!principal || principal.kind === 'operator' || name === undefined) return answered;
    const address = { tenant: tenantOf(principal), branch: principal.branch, name };
    return defer(() => this.enter(address)).pipe(
      mergeMap((marker) =>
        marker === null ? answered : answered.pipe(finalize(() => void this.leave(marker))),
      ),
    );
  }

  /** Runs a write of `name` that no route names (an import's): the same gate, around it. */
  around<T>(principal: CustomerPrincipal, name: string, write: () => Promise<T>): Promise<T> {
    return this.through({ tenant: tenantOf(principal), branch: principal.branch, name }, write);
  }

  /** `around` for a write no request makes (the expiry sweep's), in a namespace. */
  aroundIn<T>(tenant: Tenant, branch: string, name: string, write: () => Promise<T>): Promise<T> {
    return this.through({ tenant, branch, name }, write);
  }

  protected async movingTarget({
    tenant,
    branch,
    name,
  }: CollectionAddress): Promise<string | null> {
    const entry = await this.registry.cached(tenant, branch, name);
    return entry?.moving ? entry.id : null;
  }

  protected async pausedNow({ tenant, branch, name }: CollectionAddress): Promise<boolean> {
    const now = await this.registry.find(tenant, branch, name, { fresh: true });
    return now?.moving?.phase === 'paused';
  }

  protected refusal({ name }: CollectionAddress): Error {
    return new CollectionMovingError(name);
  }
}

/** CollectionWriteGate on every write route of a data controller. */
export function MovableCollectionWrites(): ClassDecorator {
  return onWriteRoutes(CollectionWriteGate);
}
