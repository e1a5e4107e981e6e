import { Type } from 'class-transformer';
import { IsInt, Max, Min } from 'class-validator';

/**
 * Collection drops, erasures and item expiry, and the collection registry cache they must outlast.
 */
export class LifecycleVariables {
  /**
   * How long an instance trusts what it read of the collection registry (ms; 0: not at all). A
   * collection dropped through another instance may still take writes there for this long; the
   * instance that dropped it forgets it at once.
   */
  @Type(() => Number)
  @IsInt()
  @Min(0)
  @Max(600_000)
  REGISTRY_CACHE_MS = 5_000;

  /** Registry entries an instance keeps in memory at most (the least recently used go first). */
  @Type(() => Number)
  @IsInt()
  @Min(1)
  @Max(1_000_000)
  REGISTRY_CACHE_SIZE = 10_000;

  /**
   * How long a dropped collection's tombstone is kept (ms): every instance drops the native
   * collection again while it lasts, so a write that was already under way when the drop came
   * cannot leave a collection behind. Above REGISTRY_CACHE_MS plus the longest request.
   */
  @Type(() => Number)
  @IsInt()
  @Min(100)
  @Max(86_400_000)
  COLLECTION_DROP_GRACE_MS = 120_000;

  /**
   * How long an instance holds an erasure it works on (ms). An erasure whose holder died is taken
   * over by any instance once the lease has run out.
   */
  @Type(() => Number)
  @IsInt()
  @Min(100)
  @Max(3_600_000)
  ERASURE_LEASE_MS = 30_000;

  /**
   * How long an instance holds a search build (or a search removal) it works on (ms); each batch
   * renews it. A build whose holder died is taken over by any instance once it has run out.
   */
  @Type(() => Number)
  @IsInt()
  @Min(100)
  @Max(3_600_000)
  SEARCH_BUILD_LEASE_MS = 30_000;

  /** Items a search build reads and writes the word lists of per batch. */
  @Type(() => Number)
  @IsInt()
  @Min(1)
  @Max(10_000)
  SEARCH_BUILD_BATCH = 500;

  /** How often each instance looks for erasures to finish and tombstones to clear (ms). */
  @Type(() => Number)
  @IsInt()
  @Min(50)
  @Max(3_600_000)
  LIFECYCLE_POLL_MS = 5_000;

  /**
   * How often each instance deletes the expired items of collections with an expiry rule (ms):
   * an item is gone from the database within this long after it expired (reads hide it at once).
   */
  @Type(() => Number)
  @IsInt()
  @Min(50)
  @Max(86_400_000)
  EXPIRY_SWEEP_MS = 30_000;

  /** The longest `afterSeconds` an expiry rule may have (seconds; default 10 years). */
  @Type(() => Number)
  @IsInt()
  @Min(1)
  @Max(3_153_600_000)
  EXPIRY_MAX_SECONDS = 315_360_000;
}
