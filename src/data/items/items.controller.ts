import {
  Body,
  Controller,
  Delete,
  Get,
  HttpCode,
  HttpStatus,
  Inject,
  Param,
  Post,
  Put,
  Query,
  Req,
  Res,
} from '@nestjs/common';
import {
  ApiBadRequestResponse,
  ApiBody,
  ApiConflictResponse,
  ApiExtraModels,
  ApiForbiddenResponse,
  ApiNoContentResponse,
  ApiNotFoundResponse,
  ApiOkResponse,
  ApiTags,
  getSchemaPath,
} from '@nestjs/swagger';
import type { Request, Response } from 'express';
import { Auth, CurrentPrincipal, type CustomerPrincipal } from '../../auth';
import { ProblemDto } from '../../common/errors';
import { answerRead, answerWrite, IfMatchHeader } from '../../common/http/conditional';
import type { IfMatch } from '../../common/http/etag';
import type { ListQuery } from '../../common/http/list-query';
import { ApiConditional } from '../../common/http/openapi-conditional';
import { keysetLink } from '../../common/pagination/keyset';
import { APP_CONFIG, type AppConfig } from '../../config';
import { CollectionNamePipe } from '../collections/collection-name.pipe';
import { CollectionsService } from '../collections/collections.service';
import {
  parseDataQuery,
  toItemChangeRequest,
  toItemListQuery,
  toItemQuery,
  toItemRemovalRequest,
  toNewItemRequest,
} from '../query/data-requests';
import {
  CollectionParam,
  FieldsQuery,
  FilterQueries,
  ItemParams,
  ListQueries,
} from '../data.openapi';
import { DataCollectionDto } from '../indexes/dto/data-index.dto';
import {
  CreateDataItemDto,
  DATA_ITEM_EXAMPLE,
  DataCountDto,
  DataItemDto,
  DeleteDataItemDto,
  ProjectedDataItemDto,
  toItemJson,
  UpdateDataItemDto,
} from './dto/data-item.dto';
import { filterLimits, type FilterLimits } from '../query/filter-operators';
import { itemETag } from './item-revision';
import { parseProjection, projectedETag } from '../query/projection';
import { ItemsService } from './items.service';
import { dataBudget, type JsonBudget } from '../query/json-guard';
import { IdempotentWrites } from '../../common/idempotency';

/** A read answers whole items, or projected ones when the request names `fields`. */
/** Whether a find-or-create created its item. */
const ITEM_CREATED_HEADER = 'X-Item-Created';

const ITEM_OR_PROJECTION = {
  anyOf: [{ $ref: getSchemaPath(DataItemDto) }, { $ref: getSchemaPath(ProjectedDataItemDto) }],
};

@ApiTags('data')
@ApiExtraModels(DataItemDto, ProjectedDataItemDto)
@IdempotentWrites()
@Controller('data')
export class DataController {
  private readonly budget: JsonBudget;
  private readonly filterLimits: FilterLimits;

  constructor(
    private readonly collections: CollectionsService,
    private readonly items: ItemsService,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {
    this.budget = dataBudget(config.limits);
    this.filterLimits = filterLimits(config.limits);
  }

  private listQuery(raw: Record<string, unknown>): ListQuery {
    return parseDataQuery(raw, this.config.limits, {});
  }

  /**
   * Count and single-item routes take filters only (and a single item `fields`); paging
   * parameters would be ignored, so they are refused.
   */
  private filterQuery(raw: Record<string, unknown>, takesFields: boolean): ListQuery {
    return parseDataQuery(raw, this.config.limits, {
      refuse: { paging: true, fields: !takesFields },
    });
  }

  /** Lists the caller's collections in the request branch (sorted by name) with their indexes. */
  @Get()
  @Auth('root', 'sub', 'team')
  @ApiOkResponse({
    type: [DataCollectionDto],
    example: [
      {
        name: 'orders',
        indexes: [
          { name: '_id_', fields: { _id: 1 }, unique: true },
          { name: 'status_1', fields: { status: 1 }, unique: false },
        ],
      },
    ],
  })
  async listDataCollections(
    @CurrentPrincipal() principal: CustomerPrincipal,
  ): Promise<DataCollectionDto[]> {
    return this.collections.list(principal);
  }

  /** Lists items (keyset pagination); 204 without a body when nothing matches. */
  @Get(':collection')
  @Auth('root', 'sub', 'team')
  @CollectionParam()
  @ListQueries()
  @ApiOkResponse({
    description:
      'Items (projected ones with `fields`); `Link: <…>; rel="next"` when a further page exists',
    schema: { type: 'array', items: ITEM_OR_PROJECTION },
    example: [DATA_ITEM_EXAMPLE],
  })
  @ApiNoContentResponse({ description: 'Nothing matches (or the collection does not exist)' })
  @ApiBadRequestResponse({ type: ProblemDto, description: 'Bad collection name or query' })
  async listDataItems(
    @CurrentPrincipal() principal: CustomerPrincipal,
    @Param('collection', CollectionNamePipe) collection: string,
    @Query() raw: Record<string, unknown>,
    @Req() req: Request,
    @Res({ passthrough: true }) res: Response,
  ): Promise<DataItemDto[] | undefined> {
    const query = toItemListQuery(this.listQuery(raw), this.filterLimits);
    const page = await this.items.list(principal, collection, query);
    if (page.items.length === 0) {
      res.status(HttpStatus.NO_CONTENT);
      return undefined;
    }
    if (page.next) {
      const path = (req.originalUrl ?? req.url).split('?')[0] ?? '';
      res.setHeader('Link', keysetLink(path, raw, page.next.side, page.next.cursor));
    }
    return page.items.map((item) => toItemJson(item));
  }

  /** Stores an item; stamps the owner field and the timestamps. */
  @Post(':collection')
  @HttpCode(HttpStatus.OK)
  @Auth('root', 'sub', 'team')
  @ApiConditional('create')
  @CollectionParam()
  @ApiBody({
    type: CreateDataItemDto,
    examples: {
      simple: { value: { item: { total: 42.5, status: 'open' } } },
      unique: {
        value: {
          item: { _id: 'order-1001', orderNumber: 'A-1001', total: 42.5 },
          uniqueField: 'orderNumber',
          authField: 'ownerId',
        },
      },
      findOrCreate: {
        value: {
          item: { orderNumber: 'A-1001', total: 42.5 },
          uniqueField: 'orderNumber',
          onConflict: 'return',
        },
      },
    },
  })
  @ApiOkResponse({
    type: DataItemDto,
    example: DATA_ITEM_EXAMPLE,
    headers: {
      [ITEM_CREATED_HEADER]: {
        description:
          'With onConflict "return": `true` when the item was created, `false` when the answer is the existing item that holds the uniqueField value',
        schema: { type: 'string', enum: ['true', 'false'] },
        required: false,
      },
    },
  })
  @ApiBadRequestResponse({ type: ProblemDto, description: 'Bad name, item, field name or depth' })
  @ApiConflictResponse({
    type: ProblemDto,
    description:
      'DUPLICATE_ITEM (with `existingId`) for a taken uniqueField value or _id; COLLECTION_QUOTA_EXCEEDED',
  })
  async createDataItem(
    @CurrentPrincipal() principal: CustomerPrincipal,
    @Param('collection', CollectionNamePipe) collection: string,
    @Body() body: CreateDataItemDto,
    @Res({ passthrough: true }) res: Response,
  ): Promise<DataItemDto> {
    const request = toNewItemRequest(body, this.budget);
    if (request.onConflict === 'return') {
      const { item, created } = await this.items.findOrCreate(principal, collection, request);
      res.setHeader(ITEM_CREATED_HEADER, String(created));
      return answerWrite(res, itemETag(item), toItemJson(item));
    }
    const item = await this.items.create(principal, collection, request);
    return answerWrite(res, itemETag(item), toItemJson(item));
  }

  /** Counts the items that match (an unfiltered count by a root or team key reads collection metadata). */
  @Get(':collection/count')
  @Auth('root', 'sub', 'team')
  @CollectionParam()
  @FilterQueries()
  @ApiOkResponse({ type: DataCountDto })
  @ApiBadRequestResponse({ type: ProblemDto })
  async countDataItems(
    @CurrentPrincipal() principal: CustomerPrincipal,
    @Param('collection', CollectionNamePipe) collection: string,
    @Query() raw: Record<string, unknown>,
  ): Promise<DataCountDto> {
    const query = toItemQuery(this.filterQuery(raw, false), this.filterLimits);
    return { count: await this.items.count(principal, collection, query) };
  }

  /** Reads the one item whose field indexName equals indexValue (`_id`: the identifier). */
  @Get(':collection/:indexName/:indexValue')
  @Auth('root', 'sub', 'team')
  @ApiConditional('read')
  @ItemParams()
  @FilterQueries()
  @FieldsQuery()
  @ApiOkResponse({
    description: 'The item (projected with `fields`)',
    schema: ITEM_OR_PROJECTION,
    example: DATA_ITEM_EXAMPLE,
  })
  @ApiBadRequestResponse({ type: ProblemDto })
  @ApiNotFoundResponse({ type: ProblemDto, description: 'ITEM_NOT_FOUND' })
  @ApiConflictResponse({ type: ProblemDto, description: 'AMBIGUOUS_MATCH: more than one matches' })
  async getDataItem(
    @CurrentPrincipal() principal: CustomerPrincipal,
    @Param('collection', CollectionNamePipe) collection: string,
    @Param('indexName') indexName: string,
    @Param('indexValue') indexValue: string,
    @Query() raw: Record<string, unknown>,
    @Res({ passthrough: true }) res: Response,
  ): Promise<DataItemDto | undefined> {
    const query = this.filterQuery(raw, true);
    const projection = parseProjection(query.params.fields);
    const item = await this.items.get(
      principal,
      collection,
      indexName,
      indexValue,
      toItemQuery(query, this.filterLimits),
      projection,
    );
    return answerRead(res, projectedETag(itemETag(item), projection), () => toItemJson(item));
  }

  /** Sets fields of the one matching item (`$set`); nothing changes when none or several match. */
  @Put(':collection/:indexName/:indexValue')
  @Auth('root', 'sub', 'team')
  @ApiConditional('write')
  @ItemParams()
  @ApiBody({
    type: UpdateDataItemDto,
    examples: {
      byId: { value: { values: { status: 'paid', paidAt: '2026-01-06T09:00:00Z' } } },
      filtered: { value: { values: { status: 'paid' }, filter: { status: 'open' } } },
    },
  })
  @ApiOkResponse({ type: DataItemDto, example: DATA_ITEM_EXAMPLE })
  @ApiBadRequestResponse({ type: ProblemDto })
  @ApiForbiddenResponse({
    type: ProblemDto,
    description: 'A sub key tried to change the owner field',
  })
  @ApiNotFoundResponse({ type: ProblemDto, description: 'ITEM_NOT_FOUND' })
  @ApiConflictResponse({
    type: ProblemDto,
    description:
      'AMBIGUOUS_MATCH: more than one matches; DUPLICATE_ITEM: a unique index refuses the values',
  })
  async updateDataItem(
    @CurrentPrincipal() principal: CustomerPrincipal,
    @Param('collection', CollectionNamePipe) collection: string,
    @Param('indexName') indexName: string,
    @Param('indexValue') indexValue: string,
    @Body() body: UpdateDataItemDto,
    @IfMatchHeader() ifMatch: IfMatch,
    @Res({ passthrough: true }) res: Response,
  ): Promise<DataItemDto> {
    const request = toItemChangeRequest(body, this.budget, this.filterLimits);
    const item = await this.items.update(
      principal,
      collection,
      indexName,
      indexValue,
      request,
      ifMatch,
    );
    return answerWrite(res, itemETag(item), toItemJson(item));
  }

  /** Deletes the one matching item (the body is optional). */
  @Delete(':collection/:indexName/:indexValue')
  @HttpCode(HttpStatus.NO_CONTENT)
  @Auth('root', 'sub', 'team')
  @ApiConditional('write')
  @ItemParams()
  @ApiBody({
    type: DeleteDataItemDto,
    required: false,
    examples: { filtered: { value: { filter: { status: 'cancelled' } } } },
  })
  @ApiNoContentResponse({ description: 'Deleted' })
  @ApiBadRequestResponse({ type: ProblemDto })
  @ApiNotFoundResponse({ type: ProblemDto, description: 'ITEM_NOT_FOUND' })
  @ApiConflictResponse({ type: ProblemDto, description: 'AMBIGUOUS_MATCH: more than one matches' })
  async deleteDataItem(
    @CurrentPrincipal() principal: CustomerPrincipal,
    @Param('collection', CollectionNamePipe) collection: string,
    @Param('indexName') indexName: string,
    @Param('indexValue') indexValue: string,
    @Body() body: DeleteDataItemDto,
    @IfMatchHeader() ifMatch: IfMatch,
  ): Promise<void> {
    const request = toItemRemovalRequest(body ?? {}, this.filterLimits);
    await this.items.remove(principal, collection, indexName, indexValue, request, ifMatch);
  }
}
