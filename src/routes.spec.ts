import { METHOD_METADATA, MODULE_METADATA, PATH_METADATA } from '@nestjs/common/constants';
import {
  Controller,
  Delete,
  Get,
  RequestMethod,
  type DynamicModule,
  type ModuleMetadata,
  type Type,
} from '@nestjs/common';
import { AppModule } from './app.module';
import { isScope } from './auth/access-grant';
import { ALLOWED_KINDS, NeedsScope, REQUIRED_SCOPE } from './auth/auth.decorators';
import type { PrincipalKind } from './auth/principal';
import { isPublishablePath } from './common/http/cors';
import { loadConfig } from './config';
import { COLLECTION_GRANT } from './data/collections/collection-grant';
import { DATA_CONTROLLERS } from './data/data.controllers';
import { COLLECTION_NAME_PATTERN } from './data/query/data.constants';

type ModuleRef = NonNullable<ModuleMetadata['imports']>[number];

/** Every controller of the application: those of a module and of every module it imports. */
function controllersOf(root: ModuleRef): Set<Type> {
  const controllers = new Set<Type>();
  const seen = new Set<Type>();
  const visit = (ref: ModuleRef): void => {
    // Forward references and asynchronous modules hold no controllers in this application.
    if (ref instanceof Promise || 'forwardRef' in ref) return;
    const dynamic: DynamicModule | undefined = 'module' in ref ? ref : undefined;
    const module = dynamic?.module ?? (ref as Type);
    if (seen.has(module)) return;
    seen.add(module);
    const own = (Reflect.getMetadata(MODULE_METADATA.CONTROLLERS, module) ?? []) as Type[];
    for (const controller of [...own, ...(dynamic?.controllers ?? [])]) controllers.add(controller);
    const imports = (Reflect.getMetadata(MODULE_METADATA.IMPORTS, module) ?? []) as ModuleRef[];
    for (const imported of [...imports, ...(dynamic?.imports ?? [])]) visit(imported);
  };
  visit(root);
  return controllers;
}

interface Route {
  method: string;
  /** Its segments joined by `/`, parameters as declared (`data/:collection`). */
  path: string;
  /** The name of its handler method. */
  handler: string;
}

/** The routes a controller class declares. */
function routesOf(controller: Type): Route[] {
  const prefixes = [Reflect.getMetadata(PATH_METADATA, controller) as string | string[]].flat();
  const prototype = controller.prototype as Record<string, unknown>;
  return Object.getOwnPropertyNames(prototype).flatMap((name) => {
    const handler = prototype[name];
    if (typeof handler !== 'function' || name === 'constructor') return [];
    const paths = Reflect.getMetadata(PATH_METADATA, handler) as string | string[] | undefined;
    const method = Reflect.getMetadata(METHOD_METADATA, handler) as RequestMethod | undefined;
    if (paths === undefined || method === undefined) return [];
    return prefixes.flatMap((prefix) =>
      [paths].flat().map((path) => ({
        handler: name,
        method: RequestMethod[method],
        path: `${prefix}/${path}`
          .split('/')
          .filter((segment) => segment !== '')
          .join('/'),
      })),
    );
  });
}

/** A path with its parameters unnamed: `data/:collection` and `data/:c` are one URL. */
const urlOf = (path: string): string =>
  path
    .split('/')
    .map((segment) => (segment.startsWith(':') ? ':' : segment))
    .join('/');

/** Whether one URL could match both paths: as many segments, each equal or a parameter in one. */
function overlap(a: string, b: string): boolean {
  const [x, y] = [a.split('/'), b.split('/')];
  return (
    x.length === y.length &&
    x.every((segment, i) => {
      const other = y[i] as string;
      return segment === other || segment.startsWith(':') || other.startsWith(':');
    })
  );
}

/** Whether `fixed`, where `param` is `:collection`, is a segment no collection name can be. */
const noCollection = (param: string, fixed: string): boolean =>
  param === ':collection' && !fixed.startsWith(':') && !COLLECTION_NAME_PATTERN.test(fixed);

/**
 * Whether the router could give a request for `fixed` to `param` (they overlap) although it is
 * not meant for it: `fixed` has a segment no collection name can be (one with a dot, such as
 * `openapi.json`) where `param` has `:collection`.
 */
function shadows(param: string, fixed: string): boolean {
  const [x, y] = [param.split('/'), fixed.split('/')];
  return overlap(param, fixed) && x.some((segment, i) => noCollection(segment, y[i] as string));
}

/** Whether one request could be meant for both paths: they overlap, and neither shadows the other. */
function overlapInMeaning(a: string, b: string): boolean {
  return overlap(a, b) && !shadows(a, b) && !shadows(b, a);
}

/** The URLs whose verbs are served by more than one controller class, with those classes. */
function splitUrls(controllers: Iterable<Type>): string[] {
  const owners = new Map<string, Set<string>>();
  for (const controller of controllers) {
    for (const { path } of routesOf(controller)) {
      const url = urlOf(path);
      owners.set(url, (owners.get(url) ?? new Set()).add(controller.name));
    }
  }
  return [...owners]
    .filter(([, names]) => names.size > 1)
    .map(([url, names]) => `${url}: ${[...names].join(', ')}`);
}

/**
 * The routes that declare no scope (@NeedsScope, @NeedsNoScope or @Public, on the method or its
 * class) or an unknown one, as `METHOD path (Controller.handler)`.
 */
function unscopedRoutes(controllers: Iterable<Type>): string[] {
  return [...controllers].flatMap((controller) =>
    routesOf(controller)
      .filter(({ handler }) => {
        const method = (controller.prototype as Record<string, object>)[handler] as object;
        // The method's declaration overrides its class's, also when it is null (no scope).
        const own = Reflect.hasMetadata(REQUIRED_SCOPE, method) ? method : controller;
        if (!Reflect.hasMetadata(REQUIRED_SCOPE, own)) return true;
        const scope: unknown = Reflect.getMetadata(REQUIRED_SCOPE, own);
        return scope !== null && !(typeof scope === 'string' && isScope(scope));
      })
      .map(({ method, path, handler }) => `${method} ${path} (${controller.name}.${handler})`),
  );
}

describe('routes', () => {
  const config = loadConfig({ NODE_ENV: 'test' });
  const controllers = controllersOf(
    AppModule.forRoot({ ...config, database: { ...config.database, uri: 'mongodb://unused' } }),
  );

  it('are found in every module', () => {
    expect(controllers.size).toBeGreaterThan(15);
  });

  it('put all verbs of one URL in one controller class', () => {
    expect(splitUrls(controllers)).toEqual([]);
  });

  it('each declare the scope a key needs to call them', () => {
    expect(unscopedRoutes(controllers)).toEqual([]);
  });

  it('names a route without a scope, and takes a class-wide scope for its routes', () => {
    @Controller('things')
    @NeedsScope('data:read')
    class Declared {
      @Get(':id')
      read(): void {}
    }
    @Controller('things')
    class Undeclared {
      @Get()
      list(): void {}
      @Delete(':id')
      @NeedsScope('data:write')
      remove(): void {}
    }
    expect(unscopedRoutes([Declared, Undeclared])).toEqual(['GET things (Undeclared.list)']);
  });

  it("hold every route with a {collection} parameter to the key's collection limit", () => {
    const guarded = (controller: Type): boolean =>
      Reflect.getMetadata(COLLECTION_GRANT, controller) === true;
    const unguarded = [...controllers].flatMap((controller) =>
      routesOf(controller)
        .filter(({ path }) => path.split('/').includes(':collection') && !guarded(controller))
        .map(({ method, path }) => `${method} ${path} (${controller.name})`),
    );
    expect(unguarded).toEqual([]);
    expect([...controllers].filter(guarded).length).toBeGreaterThan(5);
  });

  it('admit a publishable key only on GET routes its preflight answers: reads of items and the feed', () => {
    const kindsOf = (controller: Type, handler: string): PrincipalKind[] =>
      (Reflect.getMetadata(
        ALLOWED_KINDS,
        (controller.prototype as Record<string, object>)[handler] as object,
      ) ??
        Reflect.getMetadata(ALLOWED_KINDS, controller) ??
        []) as PrincipalKind[];
    const admitted = [...controllers].flatMap((controller) =>
      routesOf(controller)
        .filter(({ handler }) => kindsOf(controller, handler).includes('publishable'))
        .map(({ method, path }) => `${method} /${path}`),
    );
    expect(admitted.sort()).toEqual([
      'GET /data/:collection',
      'GET /data/:collection/:indexName/:indexValue',
      'GET /data/:collection/aggregate',
      'GET /data/:collection/count',
      'GET /data/:collection/explain',
      'GET /events',
      'GET /events/stream',
    ]);
    for (const route of admitted)
      expect(isPublishablePath(route.slice('GET '.length).replaceAll(/:\w+/g, 'x'))).toBe(true);
  });

  it('finds a URL split over two classes, whatever its parameters are named', () => {
    @Controller('things')
    class Reads {
      @Get(':id')
      read(): void {}
    }
    @Controller('things')
    class Writes {
      @Delete(':key')
      remove(): void {}
    }
    expect(splitUrls([Reads, Writes])).toEqual(['things/:: Reads, Writes']);
  });
});

describe('data routes', () => {
  // In registration order: the order in which the router tries them.
  const routes = DATA_CONTROLLERS.flatMap((controller, order) =>
    routesOf(controller).map((route) => ({ ...route, order, controller: controller.name })),
  );

  it('are found in the controllers', () => {
    expect(routes.length).toBeGreaterThan(15);
  });

  it('never overlap, so their registration order cannot matter', () => {
    const clashes = routes.flatMap((a, i) =>
      routes
        .slice(i + 1)
        .filter((b) => a.method === b.method && overlapInMeaning(a.path, b.path))
        .map((b) => `${a.method} ${a.path} ~ ${b.path}`),
    );
    expect(clashes).toEqual([]);
  });

  it('register a fixed path that no collection name can be before the route it overlaps', () => {
    const late = routes.flatMap((fixed) =>
      routes
        .filter((b) => b.method === fixed.method && shadows(b.path, fixed.path))
        .filter((b) => b.order <= fixed.order)
        .map(
          (b) =>
            `${fixed.method} ${fixed.path} (${fixed.controller}) not before ${b.path} (${b.controller})`,
        ),
    );
    expect(routes.some((r) => r.path === 'data/openapi.json')).toBe(true);
    expect(late).toEqual([]);
  });

  it('detects an overlap between a parameter and a fixed segment', () => {
    expect(overlap('data/:collection/:x', 'data/:collection/count')).toBe(true);
    expect(overlap('data/:collection/count', 'data/:collection/:a/:b')).toBe(false);
  });

  it('tells a fixed segment that no collection name can be from one that could be', () => {
    expect(overlap('data/:collection', 'data/openapi.json')).toBe(true);
    expect(overlapInMeaning('data/:collection', 'data/openapi.json')).toBe(false);
    expect(overlapInMeaning('data/openapi.json', 'data/:collection')).toBe(false);
    expect(overlapInMeaning('data/:collection', 'data/count')).toBe(true);
    expect(overlapInMeaning('data/:collection/:x', 'data/:collection/a.b')).toBe(true);
    expect(shadows('data/:collection', 'data/openapi.json')).toBe(true);
    expect(shadows('data/openapi.json', 'data/:collection')).toBe(false);
  });
});
