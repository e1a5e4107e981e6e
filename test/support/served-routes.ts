import type { TestApp } from './app';

interface ExpressLayer {
  route?: { path: string; methods: Record<string, boolean> };
}

/**
 * Every route Express really serves, as "METHOD /path/{param}", apart from the pages (Swagger UI,
 * the console) and /metrics, which are not API operations.
 */
export function servedRoutes(t: TestApp): string[] {
  const express = t.app.getHttpAdapter().getInstance() as { router: { stack: ExpressLayer[] } };
  const routes = express.router.stack.flatMap((layer) =>
    layer.route
      ? Object.keys(layer.route.methods).map(
          (method) =>
            `${method.toUpperCase()} ${layer.route!.path.replace(/:([A-Za-z0-9_]+)/g, '{$1}').replace(/(.)\/$/, '$1')}`,
        )
      : [],
  );
  // Nest mounts module middleware as routes too: on a catch-all path, or on the paths of the
  // controllers it serves, which the Set folds into their endpoints.
  return [...new Set(routes)]
    .filter((route) => !/ \/(docs|metrics|console)/.test(route) && !route.includes('{*path}'))
    .sort();
}
