import type { ExecutionContext, Type } from '@nestjs/common';
import type { Reflector } from '@nestjs/core';
import type { Scope } from './access-grant';
import { ALLOWED_KINDS, IS_PUBLIC, REQUIRED_SCOPE } from './auth.decorators';
import type { PrincipalKind } from './principal';

/** What a route lets in: anyone (@Public), or the kinds of @Auth with the scope of @NeedsScope. */
export interface RouteAccessRules {
  isPublic: boolean;
  /** The principal kinds @Auth names; none: no key may call the route. */
  kinds: readonly PrincipalKind[];
  /** The scope the route needs (@NeedsScope), or null where it needs none. */
  scope: Scope | null;
}

const PUBLIC: RouteAccessRules = Object.freeze({ isPublic: true, kinds: [], scope: null });

/**
 * Each route's access rules, read from its declarations once per route and then kept: the
 * guard's checks cost a map lookup per request, no reflection and no command.
 */
export class RouteAccess {
  private readonly byController = new WeakMap<Type, Map<object, RouteAccessRules>>();

  /** The route's rules; a route that is not public and declares no scope throws. */
  of(reflector: Reflector, context: ExecutionContext): RouteAccessRules {
    const controller = context.getClass();
    const handler = context.getHandler();
    let routes = this.byController.get(controller);
    if (!routes) this.byController.set(controller, (routes = new Map<object, RouteAccessRules>()));
    let rules = routes.get(handler);
    if (!rules) routes.set(handler, (rules = read(reflector, controller, handler)));
    return rules;
  }
}

function read(reflector: Reflector, controller: Type, handler: object): RouteAccessRules {
  const targets = [handler as Type, controller];
  if (reflector.getAllAndOverride<boolean>(IS_PUBLIC, targets)) return PUBLIC;
  const scope = reflector.getAllAndOverride<Scope | null | undefined>(REQUIRED_SCOPE, targets);
  // src/routes.spec.ts fails on such a route; should one be served all the same, it is shut.
  if (scope === undefined)
    throw new Error(
      `${controller.name}.${(handler as { name?: string }).name} declares no scope (@NeedsScope)`,
    );
  const kinds = reflector.getAllAndOverride<PrincipalKind[] | undefined>(ALLOWED_KINDS, targets);
  return { isPublic: false, kinds: kinds ?? [], scope };
}
