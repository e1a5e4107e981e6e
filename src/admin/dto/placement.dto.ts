import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { IsString, Matches } from 'class-validator';
import { OptionalField } from '../../common/dto';
import { CLUSTER_NAME } from '../../config';

/** The optional `region` of a new user or team (POST /admin/users, POST /admin/teams). */
export class PlacementRequestDto {
  /**
   * Where the tenant's data must live: one of the regions of DATA_CLUSTERS. Absent: any open
   * cluster, the one with the fewest tenants. A region no cluster has, or none of whose clusters
   * is open → 400 (UNKNOWN_REGION, NO_OPEN_CLUSTER), and nothing is created.
   */
  @OptionalField()
  @IsString()
  @Matches(CLUSTER_NAME, { message: 'region must be 1-32 of a-z 0-9 -' })
  @ApiPropertyOptional({ example: 'eu', pattern: CLUSTER_NAME.source })
  region?: string;
}

/** GET /admin/tenants/{kind}/{id}/placement. */
export class PlacementDto {
  /**
   * The cluster of DATA_CLUSTERS; null for a tenant created before tenants were placed, whose
   * collections are in the main database.
   */
  @ApiProperty({ type: String, nullable: true, example: 'eu-1' })
  cluster!: string | null;

  /** The tenant's database on that cluster (the main database when `cluster` is null). */
  @ApiProperty({ example: 'tenant_3b6f0c1d2e4a5968778899aabbccddee' })
  database!: string;
}

/** One cluster of DATA_CLUSTERS, as GET /admin/clusters lists it. */
export class ClusterDto {
  @ApiProperty({ example: 'eu-1' })
  name!: string;

  @ApiProperty({ example: 'eu' })
  region!: string;

  /** Whether new tenants are placed here. */
  @ApiProperty()
  open!: boolean;

  /** Tenants placed here. */
  @ApiProperty({ example: 1200 })
  tenants!: number;

  /** Collections registered here. */
  @ApiProperty({ example: 8400 })
  collections!: number;

  /** Whether it answered a ping within DB_SERVER_SELECTION_TIMEOUT_MS. */
  @ApiProperty()
  reachable!: boolean;
}
