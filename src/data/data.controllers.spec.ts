import { METHOD_METADATA, PATH_METADATA } from '@nestjs/common/constants';
import { RequestMethod } from '@nestjs/common';
import { DATA_CONTROLLERS } from './data.controllers';

interface Route {
  method: string;
  path: string;
}

function routesOf(controller: (typeof DATA_CONTROLLERS)[number]): Route[] {
  const prefix = Reflect.getMetadata(PATH_METADATA, controller) as string;
  const prototype = controller.prototype as unknown as Record<string, unknown>;
  return Object.getOwnPropertyNames(prototype).flatMap((name) => {
    const handler = prototype[name];
    if (typeof handler !== 'function') return [];
    const path = Reflect.getMetadata(PATH_METADATA, handler) as string | undefined;
    const method = Reflect.getMetadata(METHOD_METADATA, handler) as RequestMethod | undefined;
    if (path === undefined || method === undefined) return [];
    const segments = `${prefix}/${path}`.split('/').filter((segment) => segment !== '');
    return [{ method: RequestMethod[method], path: segments.join('/') }];
  });
}

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

describe('data routes', () => {
  const routes = DATA_CONTROLLERS.flatMap(routesOf);

  it('are found in the controllers', () => {
    expect(routes.length).toBeGreaterThan(15);
  });

  it('never overlap, so their registration order cannot matter', () => {
    const clashes = routes.flatMap((a, i) =>
      routes
        .slice(i + 1)
        .filter((b) => a.method === b.method && overlap(a.path, b.path))
        .map((b) => `${a.method} ${a.path} ~ ${b.path}`),
    );
    expect(clashes).toEqual([]);
  });

  it('detects an overlap between a parameter and a fixed segment', () => {
    expect(overlap('data/:collection/:x', 'data/:collection/count')).toBe(true);
    expect(overlap('data/:collection/count', 'data/:collection/:a/:b')).toBe(false);
  });
});
