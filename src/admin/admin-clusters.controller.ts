import {
  applyDecorators,
  Body,
  Controller,
  Get,
  HttpCode,
  HttpStatus,
  Inject,
  Param,
  Post,
  Query,
  Req,
} from '@nestjs/common';
import {
  ApiAcceptedResponse,
  ApiBadRequestResponse,
  ApiConflictResponse,
  ApiNotFoundResponse,
  ApiOkResponse,
  ApiParam,
  ApiTags,
} from '@nestjs/swagger';
import type { Request } from 'express';
import { Auth, NeedsNoScope } from '../auth';
import { ProblemDto, ValidationFailedError } from '../common/errors';
import { isObjectIdHex } from '../common/mongo/object-id';
import { ApiKeysetList, nextPageLink, parseKeysetPage } from '../common/pagination/keyset-page';
import { Reply } from '../common/http/reply';
import { TENANT_KINDS, type Tenant, type TenantKind } from '../common/tenancy/namespace';
import { APP_CONFIG, type AppConfig } from '../config';
import { TenantMoves } from '../lifecycle';
import { AdminService } from './admin.service';
import { ClusterDto, MoveDto, MoveRequestDto, PlacementDto } from './dto/placement.dto';

function tenantOfPath(kind: string, id: string): Tenant {
  if (!(TENANT_KINDS as readonly string[]).includes(kind)) {
    throw new ValidationFailedError([{ field: 'kind', message: 'must be user or team' }]);
  }
  return { kind: kind as TenantKind, id };
}

const TENANT_NOT_FOUND = 'PROFILE_NOT_FOUND: no such user; TEAM_NOT_FOUND: no such team';

/** The tenant of `tenants/:kind/:id/…`: a user by subject or a team by id, and its 404. */
const TENANT_PATH = applyDecorators(
  ApiParam({ name: 'kind', enum: TENANT_KINDS }),
  ApiParam({ name: 'id', description: "A user's subject or a team id" }),
  ApiNotFoundResponse({ type: ProblemDto, description: TENANT_NOT_FOUND }),
);

/** Where tenant data lives: the clusters of DATA_CLUSTERS, each tenant's placement, and moves. */
@ApiTags('admin')
@Controller('admin')
@NeedsNoScope()
@Auth('operator')
export class AdminClustersController {
  constructor(
    private readonly admin: AdminService,
    private readonly moves: TenantMoves,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}

  /** Every cluster of DATA_CLUSTERS: its region, whether it is open, its tenants and collections. */
  @Get('clusters')
  @ApiOkResponse({ type: [ClusterDto] })
  async listClusters(): Promise<ClusterDto[]> {
    return this.admin.clusters();
  }

  /** The cluster and database of a tenant's collections. */
  @Get('tenants/:kind/:id/placement')
  @TENANT_PATH
  @ApiOkResponse({ type: PlacementDto })
  @ApiBadRequestResponse({
    type: ProblemDto,
    description: 'VALIDATION_FAILED: kind is not user or team',
  })
  async getPlacement(@Param('kind') kind: string, @Param('id') id: string): Promise<PlacementDto> {
    return this.admin.placementOf(tenantOfPath(kind, id));
  }

  /**
   * Moves the tenant — every collection of every branch, with its items, indexes and unique-value
   * claims — to another cluster, online: reads go on throughout, the writes of each collection
   * pause for at most MOVE_MAX_WRITE_PAUSE_MS (503 COLLECTION_MOVING with Retry-After) before it
   * switches, and the sources are removed once no instance can read them any more. Runs in the
   * background, resumed by another instance after a crash; `Location` names it.
   */
  @Post('tenants/:kind/:id/move')
  @HttpCode(HttpStatus.ACCEPTED)
  @TENANT_PATH
  @ApiAcceptedResponse({
    type: MoveDto,
    description: 'The move, running (`Location` names it)',
    headers: { Location: { description: '/admin/moves/{id}', schema: { type: 'string' } } },
  })
  @ApiBadRequestResponse({
    type: ProblemDto,
    description: 'VALIDATION_FAILED; UNKNOWN_CLUSTER: no cluster of DATA_CLUSTERS has the name',
  })
  @ApiConflictResponse({
    type: ProblemDto,
    description:
      'CLUSTER_CLOSED: the cluster takes no new tenants; ALREADY_ON_CLUSTER; MOVE_RUNNING: a move of the tenant runs (`existingId` names it); ERASURE_RUNNING: the tenant is being erased (`existingId` names the erasure)',
  })
  async moveTenant(
    @Param('kind') kind: string,
    @Param('id') id: string,
    @Body() body: MoveRequestDto,
  ): Promise<Reply<MoveDto>> {
    const move = await this.moves.start(tenantOfPath(kind, id), body.cluster);
    return Reply.located(`/admin/moves/${move.id}`, MoveDto.from(move));
  }

  /** Every tenant move, newest first; `Link: <…>; rel="next"` while more follow. */
  @Get('moves')
  @ApiKeysetList(MoveDto, 'id', '^[0-9a-f]{24}$', 'the moves started before that one')
  async listMoves(
    @Query() raw: Record<string, unknown>,
    @Req() req: Request,
  ): Promise<Reply<MoveDto[]>> {
    const page = parseKeysetPage(raw, {
      limitDefault: this.config.limits.listDefault,
      limitMax: this.config.limits.listMax,
      cursor: { field: 'id', valid: isObjectIdHex, rule: '<move id>' },
      order: 'moves are listed newest first',
    });
    const { moves, more } = await this.moves.list(page.limit, page.after);
    const last = moves.at(-1);
    return Reply.page(
      moves.map((move) => MoveDto.from(move)),
      nextPageLink(req, raw, more && last ? { id: last.id } : undefined),
    );
  }

  /**
   * A tenant move's progress (phase, pass, items left in the pass, last progress, deadline), and
   * its end: a move always ends `done` or `failed` by its `deadlineAt` plus
   * COLLECTION_DROP_GRACE_MS and the removal of its sources.
   */
  @Get('moves/:id')
  @ApiOkResponse({ type: MoveDto })
  @ApiNotFoundResponse({ type: ProblemDto, description: 'MOVE_NOT_FOUND' })
  async getMove(@Param('id') id: string): Promise<MoveDto> {
    return MoveDto.from(await this.moves.get(id));
  }
}
