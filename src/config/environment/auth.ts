import { Type } from 'class-transformer';
import { IsInt, IsOptional, IsString, Max, MaxLength, Min, MinLength } from 'class-validator';

/** The operator key, the failed-authentication budget and the instance's cache of API keys. */
export class AuthVariables {
  @IsOptional()
  @IsString()
  @MinLength(32, { message: 'ADMIN_API_KEY must be at least 32 characters' })
  @MaxLength(512)
  ADMIN_API_KEY?: string;

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

  /**
   * From an address over its failed-authentication budget, keys that are neither the operator key
   * nor cached are looked up together, at most one database command per this many ms per address
   * and instance.
   */
  @Type(() => Number)
  @IsInt()
  @Min(100)
  @Max(60_000)
  AUTH_FAILURE_LOOKUP_INTERVAL_MS = 1_000;

  /**
   * How long an instance trusts an API key it looked up (ms; 0: look every key up on every
   * request). A key revoked through another instance still works here for at most this long; the
   * instance that revokes it forgets it at once, and expiry is checked on every request.
   */
  @Type(() => Number)
  @IsInt()
  @Min(0)
  @Max(60_000)
  API_KEY_CACHE_MS = 5_000;

  /**
   * How often an instance checks, against the database, the rights of the principals of its open
   * streams and long polls (ms): one that lost them (key revoked or expired, team membership
   * ended) is ended within about this long, even while quiet. One batched check per interval
   * per instance, however many streams are open.
   */
  @Type(() => Number)
  @IsInt()
  @Min(100)
  @Max(60_000)
  STREAM_RIGHTS_CHECK_MS = 3_000;

  /** API keys an instance keeps in memory at most (the least recently used go first). */
  @Type(() => Number)
  @IsInt()
  @Min(1)
  @Max(1_000_000)
  API_KEY_CACHE_SIZE = 10_000;

  /**
   * How often at most an instance writes a key's `lastUsedAt` (ms): the first use of a key on an
   * instance is written, then at most one write per key per this interval per instance, off the
   * request's path and batched with the other keys' writes.
   */
  @Type(() => Number)
  @IsInt()
  @Min(1_000)
  @Max(86_400_000)
  API_KEY_LAST_USED_INTERVAL_MS = 60_000;

  /** Entries (names or `prefix*` patterns) a key's `collections` may hold at most. */
  @Type(() => Number)
  @IsInt()
  @Min(1)
  @Max(1_000)
  API_KEY_MAX_COLLECTIONS = 50;

  /** CIDRs or addresses a key's `allowedIps` may hold at most. */
  @Type(() => Number)
  @IsInt()
  @Min(1)
  @Max(20)
  API_KEY_MAX_ALLOWED_IPS = 20;

  /** Origins a publishable key's `allowedOrigins` may hold at most. */
  @Type(() => Number)
  @IsInt()
  @Min(1)
  @Max(100)
  API_KEY_MAX_ALLOWED_ORIGINS = 20;
}
