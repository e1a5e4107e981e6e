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
}
