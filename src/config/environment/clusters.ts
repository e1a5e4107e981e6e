import { Type } from 'class-transformer';
import { IsInt, IsOptional, IsString, Max, Min } from 'class-validator';

/** The deployments that hold tenant data (docs/deployment.md, "Growing past one database"). */
export class ClusterVariables {
  /**
   * JSON: cluster name → `{"uri": "mongodb://…", "region": "eu", "open": true}`. Unset: one
   * cluster `default` in region `default`, on the main connection. Checked in
   * src/config/data-clusters.ts.
   */
  @IsOptional()
  @IsString()
  DATA_CLUSTERS?: string;

  /** Connections an instance opens at most to each cluster of DATA_CLUSTERS. */
  @Type(() => Number)
  @IsInt()
  @Min(1)
  @Max(1000)
  DATA_CLUSTER_POOL_SIZE = 20;

  /**
   * How long a tenant move may pause the writes of one collection at most (ms), for its last
   * comparison and switch; writes meanwhile get 503 COLLECTION_MOVING with Retry-After.
   */
  @Type(() => Number)
  @IsInt()
  @Min(100)
  @Max(60_000)
  MOVE_MAX_WRITE_PAUSE_MS = 5_000;

  /**
   * How long an instance holds a tenant move it runs (ms), renewed as it goes; a move whose
   * holder died is taken over by any instance once the lease has run out. Above
   * MOVE_MAX_WRITE_PAUSE_MS.
   */
  @Type(() => Number)
  @IsInt()
  @Min(500)
  @Max(3_600_000)
  MOVE_LEASE_MS = 30_000;

  /**
   * The time a tenant move may take before its switches at most, besides the announcement's
   * COLLECTION_DROP_GRACE_MS (ms): MOVE_BASE_TIME_MS plus MOVE_TIME_PER_1000_ITEMS_MS for every
   * thousand items the tenant holds when the copy starts. A move still copying at that deadline
   * ends failed (docs/deployment.md, "How long a move takes").
   */
  @Type(() => Number)
  @IsInt()
  @Min(1_000)
  @Max(86_400_000)
  MOVE_BASE_TIME_MS = 120_000;

  @Type(() => Number)
  @IsInt()
  @Min(100)
  @Max(3_600_000)
  MOVE_TIME_PER_1000_ITEMS_MS = 60_000;

  /**
   * A running move that made no progress (no mark, pass or batch) for this long (ms) ends
   * failed, naming it. Above MOVE_LEASE_MS (a move whose holder died is taken over before it
   * counts as stalled) and COLLECTION_DROP_GRACE_MS (the announcement waits that long).
   */
  @Type(() => Number)
  @IsInt()
  @Min(1_000)
  @Max(86_400_000)
  MOVE_STALL_MS = 300_000;
}

/** The MOVE_* settings, as AppConfig's `clusters` names them. */
export function moveSettings(v: ClusterVariables) {
  return {
    moveMaxWritePauseMs: v.MOVE_MAX_WRITE_PAUSE_MS,
    moveLeaseMs: v.MOVE_LEASE_MS,
    moveBaseTimeMs: v.MOVE_BASE_TIME_MS,
    moveTimePer1000ItemsMs: v.MOVE_TIME_PER_1000_ITEMS_MS,
    moveStallMs: v.MOVE_STALL_MS,
  };
}

export type MoveSettings = ReturnType<typeof moveSettings>;

/** What is wrong with the MOVE_* settings together (COLLECTION_DROP_GRACE_MS: `graceMs`). */
export function moveProblems(v: ClusterVariables, graceMs: number): string[] {
  const problems: string[] = [];
  if (v.MOVE_LEASE_MS <= v.MOVE_MAX_WRITE_PAUSE_MS) {
    problems.push('MOVE_LEASE_MS must exceed MOVE_MAX_WRITE_PAUSE_MS');
  }
  if (v.MOVE_STALL_MS <= v.MOVE_LEASE_MS || v.MOVE_STALL_MS <= graceMs) {
    problems.push('MOVE_STALL_MS must exceed MOVE_LEASE_MS and COLLECTION_DROP_GRACE_MS');
  }
  return problems;
}
