import { Transform, Type } from 'class-transformer';
import { IsIn, IsInt, IsOptional, IsString, Matches, Max, Min } from 'class-validator';

/** The process and its HTTP server: mode, address, logging, what it serves, how it stops. */
export class RuntimeVariables {
  @IsIn(['development', 'production', 'test'])
  NODE_ENV: 'development' | 'production' | 'test' = 'development';

  @Type(() => Number)
  @IsInt()
  @Min(0)
  @Max(65535)
  PORT = 3000;

  @IsString()
  HOST = '0.0.0.0';

  @IsIn(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'])
  LOG_LEVEL: 'fatal' | 'error' | 'warn' | 'info' | 'debug' | 'trace' | 'silent' = 'info';

  @Transform(({ value }: { value: unknown }) => value === true || value === 'true' || value === '1')
  TRUST_PROXY = false;

  /**
   * While a long stream runs, how far the JavaScript heap may grow over its live size before a
   * full collection, in percent (src/common/memory/heap-growth.ts); 0 never bounds it. Otherwise
   * V8's own factor applies (up to 4× on a small heap).
   */
  @Type(() => Number)
  @IsInt()
  @Min(0)
  @Max(1000)
  HEAP_GROWTH_PERCENT = 20;

  /** Browser origins allowed to call the API (CORS): `*` or a comma-separated list; unset = off. */
  @IsOptional()
  @Matches(/^(\*|https?:\/\/[^\s,/]+(\s*,\s*https?:\/\/[^\s,/]+)*)$/, {
    message:
      'CORS_ORIGINS must be * or a comma-separated list of origins (https://app.example.com)',
  })
  CORS_ORIGINS?: string;

  /** Serve Swagger UI (/docs) and the OpenAPI document (/docs-json, /docs-yaml). */
  @Transform(
    ({ value }: { value: unknown }) => value !== false && value !== 'false' && value !== '0',
  )
  SWAGGER_ENABLED = true;

  /** Serve the web console (/console): static assets that call the public API with the user's key. */
  @Transform(
    ({ value }: { value: unknown }) => value !== false && value !== 'false' && value !== '0',
  )
  CONSOLE_ENABLED = true;

  /**
   * Create missing indexes of the service's own collections at start. Outside production mongoose
   * builds them as models load; in production only this step (or `npm run db:sync-indexes`) does.
   */
  @Transform(
    ({ value }: { value: unknown }) => value !== false && value !== 'false' && value !== '0',
  )
  SYNC_INDEXES = true;

  @Type(() => Number)
  @IsInt()
  @Min(0)
  SHUTDOWN_TIMEOUT_MS = 10_000;

  /**
   * How long a request may take to arrive whole (Node's server.requestTimeout): an import's body
   * streams for as long as the import runs, so this bounds one import. Checked every 30 s.
   */
  @Type(() => Number)
  @IsInt()
  @Min(1000)
  HTTP_REQUEST_TIMEOUT_MS = 900_000;
}
