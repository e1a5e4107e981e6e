import { Controller, Get, Post, type ExecutionContext } from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import { NeedsNoScope, NeedsScope, Public } from './auth.decorators';
import { InsufficientScopeError } from './auth.errors';
import { RequiredScopes } from './required-scopes';

@Controller('things')
@NeedsScope('data:read')
class Things {
  @Get()
  list(): void {}
  @Post()
  @NeedsScope('data:write')
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

describe('RequiredScopes', () => {
  it("takes a route's own declaration over its class's, null included", () => {
    const scopes = new RequiredScopes();
    const reflector = new Reflector();
    expect(scopes.of(reflector, route(Things, 'list'))).toBe('data:read');
    expect(scopes.of(reflector, route(Things, 'create'))).toBe('data:write');
    expect(scopes.of(reflector, route(Things, 'me'))).toBeNull();
    expect(scopes.of(reflector, route(Open, 'health'))).toBeNull();
  });

  it('reads each route once', () => {
    const scopes = new RequiredScopes();
    const reflector = new Reflector();
    const read = jest.spyOn(reflector, 'getAllAndOverride');
    for (let i = 0; i < 3; i++) {
      scopes.of(reflector, route(Things, 'list'));
      scopes.of(reflector, route(Things, 'me'));
    }
    expect(read).toHaveBeenCalledTimes(2);
  });

  it('refuses to serve a route without a declaration', () => {
    expect(() => new RequiredScopes().of(new Reflector(), route(Bare, 'bare'))).toThrow(
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
