import { Body, Controller, Delete, Get, HttpCode, HttpStatus, Param, Post } from '@nestjs/common';
import {
  ApiBadRequestResponse,
  ApiBody,
  ApiConflictResponse,
  ApiNoContentResponse,
  ApiNotFoundResponse,
  ApiOkResponse,
  ApiTags,
} from '@nestjs/swagger';
import { Auth, CurrentPrincipal, type CustomerPrincipal, NeedsScope } from '../../auth';
import { ProblemDto } from '../../common/errors';
import { CollectionNamePipe } from '../collections/collection-name.pipe';
import { CollectionGrant } from '../collections/collection-grant';
import { toIndexRequest } from '../query/index-requests';
import { CollectionParam } from '../data.openapi';
import {
  CreateDataIndexDto,
  DataCollectionStatsDto,
  DataIndexDto,
  DeleteDataIndexDto,
} from './dto/data-index.dto';
import { IndexesService } from './indexes.service';

/** Native indexes of a tenant collection; root and team keys only. */
@ApiTags('data')
@CollectionGrant()
@Controller('data')
@Auth('root', 'team')
export class IndexesController {
  constructor(private readonly indexes: IndexesService) {}

  /** Lists the collection's indexes, `_id_` included (none when the collection does not exist). */
  @Get(':collection/index')
  @NeedsScope('data:read')
  @CollectionParam()
  @ApiOkResponse({
    type: [DataIndexDto],
    example: [
      { name: '_id_', fields: { _id: 1 }, unique: true },
      { name: 'orderNumber_1', fields: { orderNumber: 1 }, unique: true },
    ],
  })
  @ApiBadRequestResponse({ type: ProblemDto, description: 'Bad collection name' })
  async listDataIndexes(
    @CurrentPrincipal() principal: CustomerPrincipal,
    @Param('collection', CollectionNamePipe) collection: string,
  ): Promise<DataIndexDto[]> {
    return this.indexes.list(principal, collection);
  }

  /** Items, indexes and data size of a collection, from the database's statistics (no scan). */
  @Get(':collection/stats')
  @NeedsScope('data:read')
  @CollectionParam()
  @ApiOkResponse({
    type: DataCollectionStatsDto,
    example: { count: 1250, indexes: 3, sizeBytes: 524288 },
  })
  @ApiBadRequestResponse({ type: ProblemDto, description: 'Bad collection name' })
  @ApiNotFoundResponse({ type: ProblemDto, description: 'COLLECTION_NOT_FOUND' })
  async getDataCollectionStats(
    @CurrentPrincipal() principal: CustomerPrincipal,
    @Param('collection', CollectionNamePipe) collection: string,
  ): Promise<DataCollectionStatsDto> {
    return this.indexes.stats(principal, collection);
  }

  /** Creates an index (creating the collection if needed); the same index again is a no-op. */
  @Post(':collection/index')
  @NeedsScope('data:write')
  @HttpCode(HttpStatus.OK)
  @CollectionParam()
  @ApiBody({
    type: CreateDataIndexDto,
    examples: {
      single: { value: { field: 'orderNumber', sort: 'asc', unique: true } },
      compound: { value: { fields: { userId: 1, _createdAt: -1 }, name: 'by_user_newest' } },
    },
  })
  @ApiOkResponse({
    type: DataIndexDto,
    example: { name: 'orderNumber_1', fields: { orderNumber: 1 }, unique: true },
  })
  @ApiConflictResponse({
    type: ProblemDto,
    description:
      'INDEX_CONFLICT (same name or fields, another definition), UNIQUE_INDEX_DUPLICATES, INDEX_QUOTA_EXCEEDED, COLLECTION_QUOTA_EXCEEDED; PLAN_LIMIT_EXCEEDED for either under a plan (members `limit`, `max`, `usage`, `plan`)',
  })
  async createDataIndex(
    @CurrentPrincipal() principal: CustomerPrincipal,
    @Param('collection', CollectionNamePipe) collection: string,
    @Body() body: CreateDataIndexDto,
  ): Promise<DataIndexDto> {
    return this.indexes.create(principal, collection, toIndexRequest(body));
  }

  /** Drops an index by name; `_id_` is protected. */
  @Delete(':collection/index')
  @NeedsScope('data:write')
  @HttpCode(HttpStatus.NO_CONTENT)
  @CollectionParam()
  @ApiBody({ type: DeleteDataIndexDto, examples: { byName: { value: { name: 'status_1' } } } })
  @ApiNoContentResponse({ description: 'Dropped' })
  @ApiBadRequestResponse({ type: ProblemDto, description: 'PROTECTED_INDEX for _id_' })
  @ApiNotFoundResponse({ type: ProblemDto, description: 'INDEX_NOT_FOUND' })
  async deleteDataIndex(
    @CurrentPrincipal() principal: CustomerPrincipal,
    @Param('collection', CollectionNamePipe) collection: string,
    @Body() body: DeleteDataIndexDto,
  ): Promise<void> {
    await this.indexes.remove(principal, collection, body.name);
  }
}
