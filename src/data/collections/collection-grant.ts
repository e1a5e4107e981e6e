import {
  Injectable,
  UseGuards,
  applyDecorators,
  type CanActivate,
  type ExecutionContext,
} from '@nestjs/common';
import { checkCollectionAccess, type RequestWithPrincipal } from '../../auth';
import { InvalidCollectionNameError } from '../data.errors';
import { COLLECTION_NAME_PATTERN } from '../query/data.constants';

/**
 * Guards every route with a `{collection}` path parameter (CollectionParam applies it): a GET
 * reads the collection, any other method writes it (items, indexes, rules, a drop). Runs after
 * ApiKeyGuard and before pipes, interceptors (an idempotent replay included) and the handler.
 */
@Injectable()
export class CollectionGrantGuard implements CanActivate {
  canActivate(context: ExecutionContext): boolean {
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
}

/** The collection limit of a controller's `{collection}` routes (src/routes.spec.ts holds every such route to it). */
export const CollectionGrant = (): MethodDecorator & ClassDecorator =>
  applyDecorators(UseGuards(CollectionGrantGuard));
