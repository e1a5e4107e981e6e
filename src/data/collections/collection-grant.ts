import { Injectable, SetMetadata, type CanActivate, type ExecutionContext } from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import { checkCollectionAccess, type RequestWithPrincipal } from '../../auth';
import { InvalidCollectionNameError } from '../data.errors';
import { COLLECTION_NAME_PATTERN } from '../query/data.constants';

/** Route metadata: the route's `{collection}` is held to the key's collection limit. */
export const COLLECTION_GRANT = 'data:collectionGrant';

/**
 * The key's collection limit on every route marked @CollectionGrant (the routes with a
 * `{collection}` path parameter): a GET reads the collection, any other method writes it (items,
 * indexes, rules, a drop). A global guard (AppModule lists the guards in their order: after the
 * key's guard and the rate limit, before the metering, which so never counts a refusal, and
 * before the Idempotency-Key's guard, which so never keeps one), called before the pipes and the
 * handler.
 */
@Injectable()
export class CollectionGrantGuard implements CanActivate {
  /** Whether each route is marked, read once per route. */
  private readonly marked = new WeakMap<object, boolean>();

  constructor(private readonly reflector: Reflector) {}

  canActivate(context: ExecutionContext): boolean {
    if (!this.isMarked(context)) return true;
    const req = context.switchToHttp().getRequest<RequestWithPrincipal>();
    const { principal } = req;
    const collection = req.params['collection'];
    if (!principal || principal.kind === 'operator' || typeof collection !== 'string') return true;
    // A name that is no collection name stays a 400, whatever the key reaches.
    if (!COLLECTION_NAME_PATTERN.test(collection)) throw new InvalidCollectionNameError();
    const need = req.method === 'GET' || req.method === 'HEAD' ? 'read' : 'write';
    checkCollectionAccess(principal, collection, need);
    return true;
  }

  private isMarked(context: ExecutionContext): boolean {
    const handler = context.getHandler();
    let marked = this.marked.get(handler);
    if (marked === undefined) {
      marked =
        this.reflector.getAllAndOverride<boolean>(COLLECTION_GRANT, [
          handler,
          context.getClass(),
        ]) === true;
      this.marked.set(handler, marked);
    }
    return marked;
  }
}

/** Holds a controller's `{collection}` routes to the key's collection limit (src/routes.spec.ts holds every such route to it). */
export const CollectionGrant = (): MethodDecorator & ClassDecorator =>
  SetMetadata(COLLECTION_GRANT, true);
