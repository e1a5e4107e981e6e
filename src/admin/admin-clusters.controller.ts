import { Controller, Get, Param } from '@nestjs/common';
import {
  ApiBadRequestResponse,
  ApiNotFoundResponse,
  ApiOkResponse,
  ApiParam,
  ApiTags,
} from '@nestjs/swagger';
import { Auth } from '../auth';
import { ProblemDto, ValidationFailedError } from '../common/errors';
import { TENANT_KINDS, type TenantKind } from '../common/tenancy/namespace';
import { AdminService } from './admin.service';
import { ClusterDto, PlacementDto } from './dto/placement.dto';

function isTenantKind(kind: string): kind is TenantKind {
  return (TENANT_KINDS as readonly string[]).includes(kind);
}

/** Where tenant data lives: the clusters of DATA_CLUSTERS and each tenant's placement. */
@ApiTags('admin')
@Controller('admin')
@Auth('operator')
export class AdminClustersController {
  constructor(private readonly admin: AdminService) {}

  /** Every cluster of DATA_CLUSTERS: its region, whether it is open, its tenants and collections. */
  @Get('clusters')
  @ApiOkResponse({ type: [ClusterDto] })
  async listClusters(): Promise<ClusterDto[]> {
    return this.admin.clusters();
  }

  /** The cluster and database of a tenant's collections. */
  @Get('tenants/:kind/:id/placement')
  @ApiParam({ name: 'kind', enum: TENANT_KINDS })
  @ApiParam({ name: 'id', description: "A user's subject or a team id" })
  @ApiOkResponse({ type: PlacementDto })
  @ApiBadRequestResponse({
    type: ProblemDto,
    description: 'VALIDATION_FAILED: kind is not user or team',
  })
  @ApiNotFoundResponse({
    type: ProblemDto,
    description: 'PROFILE_NOT_FOUND: no such user; TEAM_NOT_FOUND: no such team',
  })
  async getPlacement(@Param('kind') kind: string, @Param('id') id: string): Promise<PlacementDto> {
    if (!isTenantKind(kind)) {
      throw new ValidationFailedError([{ field: 'kind', message: 'must be user or team' }]);
    }
    return this.admin.placementOf({ kind, id });
  }
}
