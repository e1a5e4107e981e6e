import { Transform, Type } from 'class-transformer';
import {
  IsEnum,
  IsIn,
  IsInt,
  IsOptional,
  IsString,
  Matches,
  Max,
  MaxLength,
  Min,
  MinLength,
} from 'class-validator';

/**
 * Every environment variable the service reads, with its default.
 * `.env.example` documents the same list; keep them in step.
 */
export class EnvironmentVariables {
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

  @IsOptional()
  @Matches(/^mongodb(\+srv)?:\/\/.+/, {
    message: 'MONGODB_URI must be a mongodb:// or mongodb+srv:// URI',
  })
  MONGODB_URI?: string;

  /** Database name used when MONGODB_URI names none. */
  @IsString()
  @Matches(/^[A-Za-z0-9_-]{1,38}$/, {
    message: 'MONGODB_DB_NAME must be 1-38 letters, digits, _ or -',
  })
  MONGODB_DB_NAME = 'profile_data';

  @IsOptional()
  @IsString()
  @MinLength(32, { message: 'ADMIN_API_KEY must be at least 32 characters' })
  @MaxLength(512)
  ADMIN_API_KEY?: string;

  @Type(() => Number)
  @IsInt()
  @Min(1)
  RATE_LIMIT_MAX = 1000;

  @Type(() => Number)
  @IsInt()
  @Min(100)
  RATE_LIMIT_WINDOW_MS = 60_000;

  /** Failed authentications (unknown, revoked or expired key) per client address per window. */
  @Type(() => Number)
  @IsInt()
  @Min(1)
  AUTH_FAILURE_MAX = 20;

  /** At least a second: Retry-After is given in whole seconds. */
  @Type(() => Number)
  @IsInt()
  @Min(1000)
  @Max(86_400_000)
  AUTH_FAILURE_WINDOW_MS = 60_000;

  @Type(() => Number)
  @IsInt()
  @Min(1024)
  @Max(16 * 1024 * 1024)
  BODY_LIMIT = 1024 * 1024;

  @Type(() => Number)
  @IsInt()
  @Min(10)
  @Max(600_000)
  QUERY_TIMEOUT_MS = 5_000;

  @Type(() => Number)
  @IsInt()
  @Min(100)
  @Max(60_000)
  DB_SERVER_SELECTION_TIMEOUT_MS = 2_000;

  @Type(() => Number)
  @IsInt()
  @Min(1)
  @Max(60)
  DB_RETRY_AFTER_SECONDS = 5;

  @Type(() => Number)
  @IsInt()
  @Min(1)
  @Max(10_000)
  MAX_COLLECTIONS = 100;

  @Type(() => Number)
  @IsInt()
  @Min(1)
  @Max(63)
  MAX_INDEXES = 20;

  @Type(() => Number)
  @IsInt()
  @Min(1)
  LIST_LIMIT_DEFAULT = 50;

  @Type(() => Number)
  @IsInt()
  @Min(1)
  @Max(10_000)
  LIST_LIMIT_MAX = 500;

  @Type(() => Number)
  @IsInt()
  @Min(1)
  @Max(100)
  DATA_MAX_DEPTH = 20;

  @Type(() => Number)
  @IsInt()
  @Min(1024)
  PROFILE_JSON_MAX_BYTES = 64 * 1024;

  @Type(() => Number)
  @IsInt()
  @Min(1)
  @Max(100)
  PROFILE_JSON_MAX_DEPTH = 10;

  @Type(() => Number)
  @IsInt()
  @Min(0)
  SHUTDOWN_TIMEOUT_MS = 10_000;

  @Transform(({ value }: { value: unknown }) => value === true || value === 'true' || value === '1')
  TRUST_PROXY = false;

  /** Serve Swagger UI (/docs) and the OpenAPI document (/docs-json, /docs-yaml). */
  @Transform(
    ({ value }: { value: unknown }) => value !== false && value !== 'false' && value !== '0',
  )
  SWAGGER_ENABLED = true;

  /**
   * Create missing indexes of the service's own collections at start. Outside production mongoose
   * builds them as models load; in production only this step (or `npm run db:sync-indexes`) does.
   */
  @Transform(
    ({ value }: { value: unknown }) => value !== false && value !== 'false' && value !== '0',
  )
  SYNC_INDEXES = true;

  /** Browser origins allowed to call the API (CORS): `*` or a comma-separated list; unset = off. */
  @IsOptional()
  @Matches(/^(\*|https?:\/\/[^\s,/]+(\s*,\s*https?:\/\/[^\s,/]+)*)$/, {
    message:
      'CORS_ORIGINS must be * or a comma-separated list of origins (https://app.example.com)',
  })
  CORS_ORIGINS?: string;

  /** Where embedded databases keep their files (relative to the working directory). */
  @IsString()
  DATA_DIR = '.data';

  /** Where a FerretDB binary built with `go install` is cached between runs. */
  @IsOptional()
  @IsString()
  CACHE_DIR?: string;

  @IsEnum({ auto: 'auto', 'mongodb-memory-server': 'mongodb-memory-server', ferretdb: 'ferretdb' })
  EMBEDDED_DB: 'auto' | 'mongodb-memory-server' | 'ferretdb' = 'auto';

  @Matches(/^v1\.\d+\.\d+$/, { message: 'FERRETDB_VERSION must look like v1.24.2' })
  FERRETDB_VERSION = 'v1.24.2';

  @IsOptional()
  @IsString()
  FERRETDB_BIN?: string;
}
