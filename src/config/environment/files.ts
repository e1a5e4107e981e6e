import { Type } from 'class-transformer';
import { IsInt, Max, Min } from 'class-validator';

const MIB = 1024 * 1024;

/** File storage (docs/files.md): sizes, the per-tenant quota, signed links and upload sweeps. */
export class FilesVariables {
  /** The largest file one upload may store (bytes); a larger one is a 413. */
  @Type(() => Number)
  @IsInt()
  @Min(1)
  @Max(5 * 1024 * MIB)
  FILE_MAX_BYTES = 50 * MIB;

  /** Bytes of files a tenant may keep, over all its branches; an upload past it is a 409. */
  @Type(() => Number)
  @IsInt()
  @Min(0)
  @Max(2 ** 50)
  FILE_QUOTA_BYTES = 1024 * MIB;

  /** The longest a signed download link may live (seconds). */
  @Type(() => Number)
  @IsInt()
  @Min(1)
  @Max(365 * 86_400)
  FILE_LINK_MAX_SECONDS = 7 * 86_400;

  /**
   * How long an upload may go without a sign of life from its instance (ms) before a sweep takes
   * it for abandoned (the instance died or froze) and removes what it stored. A client that
   * stops sending is cut off by HTTP_REQUEST_TIMEOUT_MS instead.
   */
  @Type(() => Number)
  @IsInt()
  @Min(1_000)
  @Max(3_600_000)
  FILE_UPLOAD_STALE_MS = 60_000;

  /** How often each instance sweeps abandoned uploads and unfinished deletions (ms). */
  @Type(() => Number)
  @IsInt()
  @Min(100)
  @Max(3_600_000)
  FILE_SWEEP_MS = 30_000;
}

/** The file settings as the service uses them (AppConfig.files). */
export interface FilesConfig {
  maxBytes: number;
  quotaBytes: number;
  linkMaxSeconds: number;
  uploadStaleMs: number;
  sweepMs: number;
}

export function filesConfigOf(vars: FilesVariables): FilesConfig {
  return {
    maxBytes: vars.FILE_MAX_BYTES,
    quotaBytes: vars.FILE_QUOTA_BYTES,
    linkMaxSeconds: vars.FILE_LINK_MAX_SECONDS,
    uploadStaleMs: vars.FILE_UPLOAD_STALE_MS,
    sweepMs: vars.FILE_SWEEP_MS,
  };
}
