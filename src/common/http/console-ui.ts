import type { NestExpressApplication } from '@nestjs/platform-express';
import type { Express, Request, Response } from 'express';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

/**
 * The web console's policy: its own scripts and styles only (no inline script), calls to this
 * origin only, images from the page's own blob: URLs (file previews), never framed.
 */
export const CONSOLE_CSP = [
  "default-src 'self'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self' blob:",
  "media-src 'self' blob:",
  "connect-src 'self'",
  "font-src 'self'",
  "object-src 'none'",
  "base-uri 'none'",
  "form-action 'self'",
  "frame-ancestors 'none'",
].join('; ');

/**
 * Where `npm run build` puts the console (console/ → dist/console): beside the compiled service,
 * or, when the service runs from its sources (tests), in the project's dist/.
 */
export function consoleAssetsDir(): string | undefined {
  return [
    join(__dirname, '..', '..', 'console'),
    join(__dirname, '..', '..', '..', 'dist', 'console'),
  ].find((dir) => existsSync(join(dir, 'index.html')));
}

/**
 * The console at /console: one page (its views live in the URL fragment) and its hashed assets.
 * It is a client of the public API like any other, so nothing here reads a key or a tenant.
 * Answers false when there is no built console to serve (then /console is an unknown route).
 */
export function serveConsole(http: NestExpressApplication, path = '/console'): boolean {
  const dir = consoleAssetsDir();
  if (!dir) return false;
  const page = readFileSync(join(dir, 'index.html'));
  const server: Express = http.getHttpAdapter().getInstance();
  const sendPage = (_req: Request, res: Response) => {
    res.setHeader('Content-Security-Policy', CONSOLE_CSP);
    // The page names its assets by content hash: it is checked again each time, they never are.
    res.setHeader('Cache-Control', 'no-cache');
    res.type('text/html').send(page);
  };
  // Express matches /console and /console/ alike. The page's asset links are relative, so the
  // bare path is redirected (relatively: behind a proxy's path prefix too) to the slashed one.
  const name = path.slice(path.lastIndexOf('/') + 1);
  server.get(path, (req: Request, res: Response) => {
    if (req.originalUrl.split('?')[0]?.endsWith('/')) sendPage(req, res);
    else res.redirect(301, `${name}/`);
  });
  server.get(`${path}/index.html`, sendPage);
  // Scripts and stylesheets only: a policy on them would not apply to anything.
  http.useStaticAssets(join(dir, 'assets'), {
    prefix: `${path}/assets`,
    index: false,
    immutable: true,
    maxAge: '365d',
    redirect: false,
  });
  return true;
}
