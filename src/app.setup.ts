import { ValidationPipe, type INestApplication } from '@nestjs/common';
import type { NestExpressApplication } from '@nestjs/platform-express';
import { SwaggerModule } from '@nestjs/swagger';
import type { ValidationError } from 'class-validator';
import type { NextFunction, Request, Response } from 'express';
import helmet from 'helmet';
import { ProblemRenderer, ValidationFailedError, type FieldError } from './common/errors';
import { bodyMiddleware } from './common/http/body';
import { createLogger, PinoLoggerService, requestIdOf, requestLogger } from './common/http/logger';
import { buildOpenApiDocument } from './common/http/openapi';
import type { AppConfig } from './config';

function flatten(errors: ValidationError[], parent = ''): FieldError[] {
  return errors.flatMap((error) => {
    const field = parent ? `${parent}.${error.property}` : error.property;
    const own = Object.values(error.constraints ?? {}).map((message) => ({ field, message }));
    return [...own, ...flatten(error.children ?? [], field)];
  });
}

/** A ValidationPipe whose failures list every offending field as problem `errors`. */
export function createValidationPipe(): ValidationPipe {
  return new ValidationPipe({
    whitelist: true,
    forbidNonWhitelisted: true,
    transform: true,
    validationError: { target: false, value: false },
    exceptionFactory: (errors) => new ValidationFailedError(flatten(errors)),
  });
}

/**
 * Everything that makes the app the app, apart from listening: main.ts and the e2e tests both
 * call this, so tests exercise the real middleware, pipes, filters and docs.
 */
export function configureApp(app: INestApplication, config: AppConfig): INestApplication {
  const http = app as NestExpressApplication;
  const logger = createLogger(config);
  http.useLogger(new PinoLoggerService(logger));
  http.set('query parser', 'simple');
  http.set('trust proxy', config.trustProxy);
  // ETags would hash every JSON response; clients of this API do not revalidate with them.
  http.set('etag', false);
  http.use((req: Request, res: Response, next: NextFunction) => {
    requestIdOf(req, res);
    next();
  });
  http.use(requestLogger(logger));
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
  http.use(
    ...bodyMiddleware(
      config.limits.bodyBytes,
      new ProblemRenderer(config.database.retryAfterSeconds),
    ),
  );
  http.useGlobalPipes(createValidationPipe());

  const document = buildOpenApiDocument(app);
  SwaggerModule.setup('docs', app, document, {
    jsonDocumentUrl: 'docs-json',
    customSiteTitle: 'API docs',
  });
  return app;
}

/** Options for NestFactory.create / createNestApplication: our own body parser runs instead of Nest's. */
export const APP_OPTIONS = { bodyParser: false, bufferLogs: true } as const;
