import { Controller, Get, Post, type ExecutionContext } from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import { Auth, NeedsNoScope, NeedsScope, Public } from './auth.decorators';
import { InsufficientScopeError } from './auth.errors';
import { RouteAccess } from './route-access';

@Controller('things')
@NeedsScope('data:read')
@Auth('root', 'sub')
class Things {
  @Get()
  list(): void {}
  @Post()
  @NeedsScope('data:write')
  @Auth('root')
  create(): void {}
  @Get('me')
  @NeedsNoScope()
  me(): void {}
}

@Controller('open')
@Public()
class Open {
  @Get()
  health(): void {}
}

@Controller('bare')
class Bare {
  @Get()
  bare(): void {}
}

function route(controller: { prototype: object }, handler: string): ExecutionContext {
  const method = (controller.prototype as Record<string, unknown>)[handler];
  return { getClass: () => controller, getHandler: () => method } as unknown as ExecutionContext;
}

describe('RouteAccess', () => {
  it("takes a route's own declarations over its class's, a null scope included", () => {
    const routes = new RouteAccess();
    const reflector = new Reflector();
    expect(routes.of(reflector, route(Things, 'list'))).toEqual({
      isPublic: false,
      kinds: ['root', 'sub'],
      scope: 'data:read',
    });
    expect(routes.of(reflector, route(Things, 'create'))).toEqual({
      isPublic: false,
      kinds: ['root'],
      scope: 'data:write',
    });
    expect(routes.of(reflector, route(Things, 'me')).scope).toBeNull();
    expect(routes.of(reflector, route(Open, 'health'))).toEqual({
      isPublic: true,
      kinds: [],
      scope: null,
    });
  });

  it('reads each route once', () => {
    const routes = new RouteAccess();
    const reflector = new Reflector();
    const read = jest.spyOn(reflector, 'getAllAndOverride');
    for (let i = 0; i < 3; i++) {
      routes.of(reflector, route(Things, 'list'));
      routes.of(reflector, route(Things, 'me'));
    }
    // Each: whether it is public, its scope and its kinds.
    expect(read).toHaveBeenCalledTimes(6);
  });

  it('refuses to serve a route without a declaration', () => {
    expect(() => new RouteAccess().of(new Reflector(), route(Bare, 'bare'))).toThrow(
      'Bare.bare declares no scope',
    );
  });

  it('names the scope in WWW-Authenticate as RFC 6750 has it', () => {
    const error = new InsufficientScopeError('export');
    expect(error.message).toContain('export');
    expect(error.headers).toEqual({
      'WWW-Authenticate': 'Bearer error="insufficient_scope", scope="export"',
    });
  });
});
