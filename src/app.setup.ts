import type { INestApplication } from '@nestjs/common';
import type { NestExpressApplication } from '@nestjs/platform-express';
import { SwaggerModule, type OpenAPIObject } from '@nestjs/swagger';
import helmet from 'helmet';
import { ProblemRenderer } from './common/errors';
import { JsonReplyAdapter } from './common/http/json-reply.adapter';
import { bodyMiddleware } from './common/http/body';
import { corsMiddleware, type CorsOrigins } from './common/http/cors';
import { createLogger, PinoLoggerService } from './common/http/logger';
import { requestContext, requestLog } from './common/http/request-context';
import { buildOpenApiDocument } from './common/http/openapi';
import { ERROR_CATALOG } from './error-catalog';
import { addIdempotencyKeys } from './idempotency';
import { serveConsole } from './common/http/console-ui';
import { serveSwaggerUi } from './common/http/swagger-ui';
import { queryKeyGuard } from './common/http/query-keys';
import { concretePathMethods } from './common/http/concrete-path-methods';
import { RouteMethods } from './common/http/route-methods';
import { createValidationPipe, DEFAULT_RAW_JSON_BUDGET } from './common/http/validation';
import type { AppConfig } from './config';
import { IMPORT_BODY } from './data/transfer/transfer.controller';
import { filesBody } from './files/files.controller';
import { ServiceMetrics } from './metrics';

/**
 * Everything that makes the app the app, apart from listening: main.ts and the e2e tests both
 * call this, so tests exercise the real middleware, pipes, filters and docs. `corsOrigins`
 * defaults to CORS_ORIGINS (unset: CORS off).
 */
export function configureApp(
  app: INestApplication,
  config: AppConfig,
  corsOrigins: CorsOrigins = config.corsOrigins,
): INestApplication {
  const http = app as NestExpressApplication;
  const logger = createLogger(config);
  http.useLogger(new PinoLoggerService(logger));
  http.set('query parser', 'simple');
  http.set('trust proxy', config.trustProxy);
  // ETags would hash every JSON response; clients of this API do not revalidate with them.
  http.set('etag', false);
  // First, so that every answer is timed, counted and logged, those refused before routing too.
  http.use(
    requestContext([
      ...(config.metrics.enabled ? [app.get(ServiceMetrics).http.observe] : []),
      requestLog(logger),
    ]),
  );
  http.use(
    helmet({
      contentSecurityPolicy: {
        directives: {
          // Swagger UI at /docs needs inline styles and data: images; scripts stay same-origin.
          'style-src': ["'self'", "'unsafe-inline'"],
          'img-src': ["'self'", 'data:'],
          // The service is often reached over plain HTTP behind a TLS-terminating proxy or on
          // localhost; upgrading would break /docs there. TLS belongs to the proxy.
          'upgrade-insecure-requests': null,
        },
      },
    }),
  );
  // Preflights are answered here, before the key check and the body parser: CORS_ORIGINS, and
  // the preflights of the routes a publishable key reads (src/common/http/cors.ts).
  http.use(corsMiddleware(corsOrigins));
  const routes = new RouteMethods(
    () => (http.getHttpAdapter().getInstance() as { router?: { stack?: unknown[] } }).router,
  );
  const renderer = new ProblemRenderer(config.database.retryAfterSeconds, routes);
  // Prototype-named query keys are refused on every route before any handler copies them.
  http.use(queryKeyGuard(renderer));
  http.use(...bodyMiddleware(config.limits.bodyBytes, renderer, [IMPORT_BODY, filesBody(config)]));
  // GET /profile/groups is a 405, not GET /profile/{accountId}: concrete paths come first.
  http.use(concretePathMethods(routes, renderer));
  // Bodies of every DTO route: prototype keys refused, nesting within DATA_MAX_DEPTH; free-form
  // members (items, values, filters) checked by their own rules under the limits in the same walk.
  http.useGlobalPipes(
    createValidationPipe(
      { ...DEFAULT_RAW_JSON_BUDGET, maxDepth: config.limits.dataMaxDepth },
      config.limits,
    ),
  );

  // A deployment may keep its API description private: then /docs* are unknown routes (404).
  if (config.swaggerEnabled) {
    // The document at /docs-json and /docs-yaml; the page is ours (src/common/http/swagger-ui.ts).
    SwaggerModule.setup('docs', app, openApiDocument(app), {
      ui: false,
      raw: ['json', 'yaml'],
      jsonDocumentUrl: 'docs-json',
      yamlDocumentUrl: 'docs-yaml',
    });
    serveSwaggerUi(http, { path: '/docs', documentPath: '/docs-json', title: 'API docs' });
  }
  // The web console (dist/console, built by `npm run build`); CONSOLE_ENABLED=false: 404.
  if (config.consoleEnabled && !serveConsole(http))
    logger.warn('CONSOLE_ENABLED is on but dist/console is missing: run npm run build');
  return app;
}

/** The HTTP adapter of NestFactory.create / createNestApplication: Express, JSON answers written directly. */
export function createHttpAdapter(): JsonReplyAdapter {
  return new JsonReplyAdapter();
}

/** Options for NestFactory.create / createNestApplication: our own body parser runs instead of Nest's. */
export const APP_OPTIONS = { bodyParser: false, bufferLogs: true } as const;

/**
 * The OpenAPI document the app serves at /docs-json: every module's error codes (the catalog
 * gathered above the modules), and what its cross-cutting modules add.
 */
export function openApiDocument(app: INestApplication): OpenAPIObject {
  return buildOpenApiDocument(app, ERROR_CATALOG, [addIdempotencyKeys]);
}
