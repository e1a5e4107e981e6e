import { Transform, Type } from 'class-transformer';
import { IsInt, IsOptional, IsString, Matches, Max, Min } from 'class-validator';

/**
 * The database the service connects to and how long it waits for it. The service never starts
 * one: the development database's own variables belong to tools/dev-database.
 */
export class DatabaseVariables {
  @IsOptional()
  @Matches(/^mongodb(\+srv)?:\/\/.+/, {
    message: 'MONGODB_URI must be a mongodb:// or mongodb+srv:// URI',
  })
  MONGODB_URI?: string;

  /**
   * Database name used when MONGODB_URI names none (then `profile_data`); set to a different name
   * than the URI's, the service refuses to boot (src/config/database-name.ts).
   */
  @IsOptional()
  @IsString()
  @Matches(/^[A-Za-z0-9_-]{1,38}$/, {
    message: 'MONGODB_DB_NAME must be 1-38 letters, digits, _ or -',
  })
  MONGODB_DB_NAME?: string;

  /**
   * A database named in MONGODB_URI's path that holds none of the service's collections while
   * `profile_data` on the same server does is refused at boot (a deployment upgraded from a
   * version that ignored the URI's database would otherwise start empty). `true` starts on it
   * anyway: a deliberate fresh start.
   */
  @Transform(({ value }: { value: unknown }) => value === true || value === 'true' || value === '1')
  DB_ALLOW_FRESH_START = false;

  /**
   * How long an instance keeps trying to reach the database at start (with backoff) before it
   * exits with an error naming the address and this setting (ms). Request-time bounds are
   * DB_SERVER_SELECTION_TIMEOUT_MS and QUERY_TIMEOUT_MS.
   */
  @Type(() => Number)
  @IsInt()
  @Min(1000)
  @Max(600_000)
  DB_BOOT_TIMEOUT_MS = 30_000;

  /**
   * The connect and server-selection timeout of each attempt to reach the database at start
   * (ms), capped by what is left of DB_BOOT_TIMEOUT_MS. Larger than the request-time bounds on
   * purpose: a host starved of CPU (a packed node, many instances starting at once) handles a
   * connection's events late, and a start that gives each attempt only the request-time connect
   * timeout fails every attempt there.
   */
  @Type(() => Number)
  @IsInt()
  @Min(500)
  @Max(600_000)
  DB_BOOT_ATTEMPT_TIMEOUT_MS = 10_000;

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
  @Min(10)
  @Max(600_000)
  QUERY_TIMEOUT_MS = 5_000;
}
