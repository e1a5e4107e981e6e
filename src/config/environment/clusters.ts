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
}
