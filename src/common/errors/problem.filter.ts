import {
  ArgumentsHost,
  Catch,
  HttpException,
  HttpStatus,
  Inject,
  Logger,
  type ExceptionFilter,
} from '@nestjs/common';
import { HttpAdapterHost } from '@nestjs/core';
import type { Request, Response } from 'express';
import { APP_CONFIG, type AppConfig } from '../../config';
import { RouteMethods } from '../http/route-methods';
import { AnsweredRequest } from './answered-request';
import { DomainError } from './domain-error';
import { COMMON_ERRORS, type CommonError } from './common.errors';
import { isDatabaseUnavailable, isDuplicateKeyError } from './mongo-errors';
import { buildProblem, sendProblem, traceIdOf, type Problem } from './problem';

const ERROR_BY_STATUS: Partial<Record<number, CommonError>> = {
  [HttpStatus.BAD_REQUEST]: COMMON_ERRORS.VALIDATION_FAILED,
  [HttpStatus.UNAUTHORIZED]: COMMON_ERRORS.UNAUTHENTICATED,
  [HttpStatus.FORBIDDEN]: COMMON_ERRORS.FORBIDDEN,
  [HttpStatus.NOT_FOUND]: COMMON_ERRORS.ROUTE_NOT_FOUND,
  [HttpStatus.METHOD_NOT_ALLOWED]: COMMON_ERRORS.METHOD_NOT_ALLOWED,
  [HttpStatus.CONFLICT]: COMMON_ERRORS.CONFLICT,
  [HttpStatus.PAYLOAD_TOO_LARGE]: COMMON_ERRORS.PAYLOAD_TOO_LARGE,
  [HttpStatus.UNSUPPORTED_MEDIA_TYPE]: COMMON_ERRORS.UNSUPPORTED_MEDIA_TYPE,
  [HttpStatus.TOO_MANY_REQUESTS]: COMMON_ERRORS.RATE_LIMITED,
  [HttpStatus.SERVICE_UNAVAILABLE]: COMMON_ERRORS.DATABASE_UNAVAILABLE,
};

/** body-parser marks its errors with `type`; these are the client's fault. */
const BODY_PARSER_ERRORS: Record<string, CommonError> = {
  'entity.too.large': COMMON_ERRORS.PAYLOAD_TOO_LARGE,
  'entity.parse.failed': COMMON_ERRORS.MALFORMED_JSON,
  'encoding.unsupported': COMMON_ERRORS.UNSUPPORTED_CONTENT_ENCODING,
  'charset.unsupported': COMMON_ERRORS.UNSUPPORTED_MEDIA_TYPE,
  'request.aborted': COMMON_ERRORS.VALIDATION_FAILED,
  'request.size.invalid': COMMON_ERRORS.VALIDATION_FAILED,
};

/** The status and `type` of an error made with the http-errors package (body-parser, raw-body). */
function httpErrorOf(error: unknown): { status: number; type: unknown } | null {
  if (typeof error !== 'object' || error === null) return null;
  const { statusCode, expose, type } = error as {
    statusCode?: unknown;
    expose?: unknown;
    type?: unknown;
  };
  if (typeof expose !== 'boolean' || typeof statusCode !== 'number') return null;
  return { status: statusCode, type };
}

function hasContentEncoding(req: Request): boolean {
  const encoding = req.headers['content-encoding'];
  return typeof encoding === 'string' && encoding !== '' && encoding.toLowerCase() !== 'identity';
}

/**
 * Turns any error into an RFC 9457 problem. Used by the global Nest filter and by the Express
 * error handler that sits behind the body parser, so every error has the same shape.
 */
export class ProblemRenderer {
  private readonly logger = new Logger('Problem');

  /** `routes`: where a 404 learns that its path exists with other methods (then 405). */
  constructor(
    private readonly retryAfterSeconds: number,
    private readonly routes?: RouteMethods,
  ) {}

  toProblem(error: unknown, req: Request): Problem {
    if (error instanceof DomainError) {
      return buildProblem(req, error.entry, error.message, error.errors, error.extensions);
    }
    const bodyParserType = (error as { type?: unknown } | null)?.type;
    if (typeof bodyParserType === 'string' && Object.hasOwn(BODY_PARSER_ERRORS, bodyParserType)) {
      const entry = BODY_PARSER_ERRORS[bodyParserType] as CommonError;
      return buildProblem(req, entry, this.bodyParserDetail(entry, error));
    }
    if (error instanceof HttpException) {
      const status = error.getStatus();
      const entry = ERROR_BY_STATUS[status];
      if (entry) return buildProblem(req, entry, this.httpDetail(error, entry, req));
    }
    const httpError = httpErrorOf(error);
    if (httpError && httpError.status >= 400 && httpError.status < 500) {
      // body-parser wraps a decompression failure (zlib's Z_DATA_ERROR, a brotli format error,
      // a truncated stream) in an untyped 400: the body does not match its Content-Encoding.
      if (httpError.status === 400 && httpError.type === undefined && hasContentEncoding(req)) {
        return buildProblem(
          req,
          COMMON_ERRORS.INVALID_CONTENT_ENCODING,
          'The request body could not be decompressed as its Content-Encoding declares.',
        );
      }
      // Any other client error keeps its 4xx meaning instead of becoming a 500.
      const entry = ERROR_BY_STATUS[httpError.status] ?? COMMON_ERRORS.VALIDATION_FAILED;
      return buildProblem(req, entry, 'The request could not be read.');
    }
    if (isDatabaseUnavailable(error)) {
      this.logger.warn(
        { traceId: traceIdOf(req), err: describeError(error) },
        'database unavailable',
      );
      return buildProblem(
        req,
        COMMON_ERRORS.DATABASE_UNAVAILABLE,
        'The database is unavailable or too slow. Retry later.',
      );
    }
    if (isDuplicateKeyError(error)) {
      return buildProblem(req, COMMON_ERRORS.CONFLICT, 'The request conflicts with existing data.');
    }
    this.logger.error({ traceId: traceIdOf(req), err: error }, 'unexpected error');
    return buildProblem(
      req,
      COMMON_ERRORS.INTERNAL_ERROR,
      `An unexpected error occurred. Quote traceId ${traceIdOf(req)} when reporting it.`,
    );
  }

  /** Answers `error` as a problem; an AnsweredRequest with the answer it carries. */
  send(error: unknown, req: Request, res: Response): void {
    if (error instanceof AnsweredRequest) {
      error.answer(res);
      return;
    }
    const allowed = this.otherMethodsOf(error, req);
    if (allowed) {
      res.setHeader('Allow', allowed.join(', '));
      const detail = `${req.method} is not allowed on ${req.path}; allowed: ${allowed.join(', ')}.`;
      sendProblem(res, buildProblem(req, COMMON_ERRORS.METHOD_NOT_ALLOWED, detail));
      return;
    }
    const problem = this.toProblem(error, req);
    if (problem.status === 503) res.setHeader('Retry-After', String(this.retryAfterSeconds));
    if (error instanceof DomainError) {
      for (const [name, value] of Object.entries(error.headers)) res.setHeader(name, value);
    }
    sendProblem(res, problem);
  }

  /** For a 404 whose path routes serve with other methods only: those methods. */
  private otherMethodsOf(error: unknown, req: Request): string[] | null {
    if (!this.routes || !(error instanceof HttpException) || error.getStatus() !== 404) return null;
    const allowed = this.routes.allowed(req.path);
    return allowed && !allowed.includes(req.method) ? allowed : null;
  }

  private bodyParserDetail({ code }: CommonError, error: unknown): string {
    if (code === 'PAYLOAD_TOO_LARGE') {
      const limit = (error as { limit?: unknown }).limit;
      return `The request body exceeds the limit of ${typeof limit === 'number' ? limit : '?'} bytes.`;
    }
    if (code === 'MALFORMED_JSON') return 'The request body could not be parsed as JSON.';
    if (code === 'UNSUPPORTED_MEDIA_TYPE')
      return 'The request body charset is not supported; send UTF-8 JSON.';
    if (code === 'UNSUPPORTED_CONTENT_ENCODING')
      return 'The Content-Encoding of the request body is not supported; send gzip, deflate, br or none.';
    return 'The request body could not be read.';
  }

  private httpDetail(error: HttpException, { code }: CommonError, req: Request): string {
    if (code === 'ROUTE_NOT_FOUND')
      return `No route ${req.method} ${(req.originalUrl ?? '').split('?')[0]}.`;
    if (code === 'RATE_LIMITED')
      return 'Too many requests for this API key. Retry after the time in Retry-After.';
    const response = error.getResponse();
    if (typeof response === 'object' && response !== null) {
      const message = (response as { message?: unknown }).message;
      if (typeof message === 'string') return message;
      if (Array.isArray(message)) return message.join('; ');
    }
    return error.message;
  }
}

function describeError(error: unknown): { name?: string; message?: string } {
  if (error instanceof Error) return { name: error.name, message: error.message };
  return {};
}

@Catch()
export class ProblemFilter implements ExceptionFilter {
  private readonly renderer: ProblemRenderer;

  constructor(@Inject(APP_CONFIG) config: AppConfig, adapterHost: HttpAdapterHost) {
    const routes = new RouteMethods(
      () => adapterHost.httpAdapter.getInstance<{ router?: { stack?: unknown[] } }>().router,
    );
    this.renderer = new ProblemRenderer(config.database.retryAfterSeconds, routes);
  }

  catch(error: unknown, host: ArgumentsHost): void {
    const http = host.switchToHttp();
    this.renderer.send(error, http.getRequest<Request>(), http.getResponse<Response>());
  }
}
