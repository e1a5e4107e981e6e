import type { NestExpressApplication } from '@nestjs/platform-express';
import type { Express, Request, Response } from 'express';
import { dirname } from 'node:path';

/**
 * Swagger UI at /docs, loading the OpenAPI document from /docs-json in the browser.
 *
 * @nestjs/swagger's own page inlines the whole document into `swagger-ui-init.js` with
 * `String.prototype.replace(template, string)`, where `$\`` and `$'` in the replacement are
 * special: a description containing them (this API's do, e.g. "names without `$`") splices the
 * script into itself and the page stays blank. Here the init script is a fixed text that fetches
 * the document, so nothing the document contains can reach the script. It is same-origin and not
 * inline, so the strict Content-Security-Policy (script-src 'self') holds.
 */
export function serveSwaggerUi(
  http: NestExpressApplication,
  options: { path: string; documentPath: string; title: string },
): void {
  const { path, documentPath } = options;
  // The page is served at /docs and /docs/: its asset links are relative to either.
  const page = (assets: string) => swaggerUiPage(assets, options.title);
  const withoutSlash = page(`${path.slice(path.lastIndexOf('/') + 1)}/`);
  const withSlash = page('./');
  const server: Express = http.getHttpAdapter().getInstance();
  const sendPage = (req: Request, res: Response) => {
    res.type('text/html').send(req.path.endsWith('/') ? withSlash : withoutSlash);
  };
  // Before the application's routes: Nest registers those when the app initialises.
  server.get(path, sendPage);
  server.get(`${path}/index.html`, sendPage);
  server.get(`${path}/swagger-ui-init.js`, (_req: Request, res: Response) => {
    res.type('application/javascript').send(initScript(path, documentPath));
  });
  // The bundle, its stylesheet and icons (the package's index.html is the route above). Located
  // by its package.json: the package's main module would load the 1.5 MB bundle into the server.
  http.useStaticAssets(dirname(require.resolve('swagger-ui-dist/package.json')), {
    prefix: path,
    index: false,
  });
}

function swaggerUiPage(assets: string, title: string): string {
  return [
    '<!DOCTYPE html>',
    '<html lang="en">',
    '<head>',
    '<meta charset="UTF-8">',
    `<title>${escapeHtml(title)}</title>`,
    `<link rel="stylesheet" type="text/css" href="${assets}swagger-ui.css">`,
    `<link rel="icon" type="image/png" href="${assets}favicon-32x32.png" sizes="32x32">`,
    '</head>',
    '<body>',
    '<div id="swagger-ui"></div>',
    `<script src="${assets}swagger-ui-bundle.js" charset="UTF-8"></script>`,
    `<script src="${assets}swagger-ui-init.js" charset="UTF-8"></script>`,
    '</body>',
    '</html>',
  ].join('\n');
}

/**
 * Finds the document relative to where the page is, so the UI also works behind a proxy that
 * serves the API under a path prefix.
 */
function initScript(path: string, documentPath: string): string {
  return `window.addEventListener('load', function () {
  var page = new RegExp(${JSON.stringify(`${escapeRegExp(path)}(/(index\\.html)?)?$`)});
  var base = window.location.pathname.replace(page, '');
  window.ui = SwaggerUIBundle({
    url: base + ${JSON.stringify(documentPath)},
    dom_id: '#swagger-ui',
    deepLinking: true,
    presets: [SwaggerUIBundle.presets.apis],
    layout: 'BaseLayout',
  });
});
`;
}

function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}
