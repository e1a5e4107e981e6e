import type { ExecutionContext, Type } from '@nestjs/common';
import type { Reflector } from '@nestjs/core';
import type { Scope } from './access-grant';
import { REQUIRED_SCOPE } from './auth.decorators';

/**
 * The scope each route needs (@NeedsScope, @NeedsNoScope, @Public), read from its declaration
 * once per route and then kept: the guard's check costs a map lookup per request, no command.
 */
export class RequiredScopes {
  private readonly byController = new WeakMap<Type, Map<object, Scope | null>>();

  /** The route's scope, or null where it needs none; a route without a declaration throws. */
  of(reflector: Reflector, context: ExecutionContext): Scope | null {
    const controller = context.getClass();
    const handler = context.getHandler();
    let routes = this.byController.get(controller);
    if (!routes) this.byController.set(controller, (routes = new Map<object, Scope | null>()));
    const known = routes.get(handler);
    if (known !== undefined) return known;
    const declared = reflector.getAllAndOverride<Scope | null | undefined>(REQUIRED_SCOPE, [
      handler,
      controller,
    ]);
    // src/routes.spec.ts fails on such a route; should one be served all the same, it is shut.
    if (declared === undefined)
      throw new Error(`${controller.name}.${handler.name} declares no scope (@NeedsScope)`);
    routes.set(handler, declared);
    return declared;
  }
}
