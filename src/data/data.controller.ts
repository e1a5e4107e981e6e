import {
  applyDecorators,
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
  ApiParam,
  ApiQuery,
  ApiTags,
  getSchemaPath,
} from '@nestjs/swagger';
import type { Request, Response } from 'express';
import { Auth, CurrentPrincipal, type CustomerPrincipal } from '../auth';
import { ProblemDto, ValidationFailedError } from '../common/errors';
import { parseListQuery, type ListQuery } from '../common/http/list-query';
import { APP_CONFIG, type AppConfig } from '../config';
import { DataService } from './data.service';
import { DataCollectionDto } from './dto/data-index.dto';
import {
  CreateDataItemDto,
  DATA_ITEM_EXAMPLE,
  DataCountDto,
  DataItemDto,
  DeleteDataItemDto,
  toItemJson,
  UpdateDataItemDto,
} from './dto/data-item.dto';

const LIST_ONLY = /^(sort|sortOrder|limit|before\[.*\]|after\[.*\])$/;

const CollectionParam = () =>
  ApiParam({
    name: 'collection',
    description: 'Collection name: ^[A-Za-z][A-Za-z0-9_-]{0,63}$ (per tenant and branch)',
    example: 'orders',
  });

const ItemParams = () =>
  applyDecorators(
    CollectionParam(),
    ApiParam({
      name: 'indexName',
      description: '`_id`, or a field (dotted path) whose value selects the item',
      example: '_id',
    }),
    ApiParam({
      name: 'indexValue',
      description:
        'The value; for fields "5" matches "5" and 5, "true" true, "null" null (URL-encode it)',
      example: 'order-1001',
    }),
  );

const FilterQueries = () =>
  applyDecorators(
    ApiQuery({
      name: 'authField',
      required: false,
      description: 'Owner field (default userId); sub keys only ever see items they own',
      example: 'userId',
    }),
    ApiQuery({
      name: 'filter',
      required: false,
      style: 'deepObject',
      explode: true,
      schema: { type: 'object', additionalProperties: { type: 'string' } },
      description:
        'Equality filters `filter[k]=v`, also written `k=v` (dotted paths allowed). "5" matches "5" and 5, "true" true, "null" null.',
      example: { status: 'open' },
    }),
    ApiQuery({
      name: 'existsFilter',
      required: false,
      style: 'deepObject',
      explode: true,
      schema: { type: 'object', additionalProperties: { type: 'string', enum: ['true', 'false'] } },
      description: '`existsFilter[k]=true|false`: the field is present or absent',
      example: { paidAt: 'false' },
    }),
  );

const ListQueries = () =>
  applyDecorators(
    FilterQueries(),
    ApiQuery({
      name: 'sort',
      required: false,
      description: 'Field (dotted path) to sort by; ties are broken by _id',
      schema: { type: 'string', default: '_id' },
    }),
    ApiQuery({
      name: 'sortOrder',
      required: false,
      schema: { type: 'string', enum: ['asc', 'desc'], default: 'desc' },
    }),
    ApiQuery({
      name: 'limit',
      required: false,
      schema: { type: 'integer', minimum: 1, maximum: 500, default: 50 },
    }),
    ApiQuery({
      name: 'after',
      required: false,
      style: 'deepObject',
      explode: true,
      schema: { type: 'object', additionalProperties: { type: 'string' } },
      description:
        'Keyset cursor `after[<sort field>]=v` (+ `after[_id]=<id>` as tie-breaker): items after v in the sort order. Numbers compare as numbers, _createdAt/_updatedAt as RFC 3339 dates.',
      example: { total: '40', _id: '665f1c2a9b1e8a0012345679' },
    }),
    ApiQuery({
      name: 'before',
      required: false,
      style: 'deepObject',
      explode: true,
      schema: { type: 'object', additionalProperties: { type: 'string' } },
      description: '`before[<sort field>]=v` (+ `before[_id]`): items before v in the sort order',
    }),
  );

@ApiTags('data')
@ApiExtraModels(DataItemDto)
@Controller('data')
export class DataController {
  constructor(
    private readonly data: DataService,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}

  private listQuery(raw: Record<string, unknown>): ListQuery {
    return parseListQuery(raw, {
      limitDefault: this.config.limits.listDefault,
      limitMax: this.config.limits.listMax,
      params: ['authField'],
      allowExists: true,
    });
  }

  /** Count and single-item routes take filters only; paging parameters would be ignored, so they are refused. */
  private filterQuery(raw: Record<string, unknown>): ListQuery {
    const paging = Object.keys(raw).filter((key) => LIST_ONLY.test(key));
    if (paging.length > 0)
      throw new ValidationFailedError(
        paging.map((field) => ({ field, message: 'is only accepted by GET /data/{collection}' })),
      );
    return this.listQuery(raw);
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
    return this.data.listCollections(principal);
  }

  /** Lists items (keyset pagination); 204 without a body when nothing matches. */
  @Get(':collection')
  @Auth('root', 'sub', 'team')
  @CollectionParam()
  @ListQueries()
  @ApiOkResponse({
    description: 'Items; `Link: <…>; rel="next"` when a further page exists',
    schema: { type: 'array', items: { $ref: getSchemaPath(DataItemDto) } },
    example: [DATA_ITEM_EXAMPLE],
  })
  @ApiNoContentResponse({ description: 'Nothing matches (or the collection does not exist)' })
  @ApiBadRequestResponse({ type: ProblemDto, description: 'Bad collection name or query' })
  async listDataItems(
    @CurrentPrincipal() principal: CustomerPrincipal,
    @Param('collection') collection: string,
    @Query() raw: Record<string, unknown>,
    @Req() req: Request,
    @Res({ passthrough: true }) res: Response,
  ): Promise<DataItemDto[] | undefined> {
    const page = await this.data.listItems(principal, collection, this.listQuery(raw));
    if (page.items.length === 0) {
      res.status(HttpStatus.NO_CONTENT);
      return undefined;
    }
    if (page.next) res.setHeader('Link', `<${nextUrl(req, raw, page.next)}>; rel="next"`);
    return page.items.map(toItemJson);
  }

  /** Stores an item; stamps the owner field and the timestamps. */
  @Post(':collection')
  @HttpCode(HttpStatus.OK)
  @Auth('root', 'sub', 'team')
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
    },
  })
  @ApiOkResponse({ type: DataItemDto, example: DATA_ITEM_EXAMPLE })
  @ApiBadRequestResponse({ type: ProblemDto, description: 'Bad name, item, field name or depth' })
  @ApiConflictResponse({
    type: ProblemDto,
    description:
      'DUPLICATE_ITEM (with `existingId`) for a taken uniqueField value or _id; COLLECTION_QUOTA_EXCEEDED',
  })
  async createDataItem(
    @CurrentPrincipal() principal: CustomerPrincipal,
    @Param('collection') collection: string,
    @Body() body: CreateDataItemDto,
  ): Promise<DataItemDto> {
    return toItemJson(await this.data.createItem(principal, collection, body));
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
    @Param('collection') collection: string,
    @Query() raw: Record<string, unknown>,
  ): Promise<DataCountDto> {
    return { count: await this.data.countItems(principal, collection, this.filterQuery(raw)) };
  }

  /** Reads the one item whose field indexName equals indexValue (`_id`: the identifier). */
  @Get(':collection/:indexName/:indexValue')
  @Auth('root', 'sub', 'team')
  @ItemParams()
  @FilterQueries()
  @ApiOkResponse({ type: DataItemDto, example: DATA_ITEM_EXAMPLE })
  @ApiBadRequestResponse({ type: ProblemDto })
  @ApiNotFoundResponse({ type: ProblemDto, description: 'ITEM_NOT_FOUND' })
  @ApiConflictResponse({ type: ProblemDto, description: 'AMBIGUOUS_MATCH: more than one matches' })
  async getDataItem(
    @CurrentPrincipal() principal: CustomerPrincipal,
    @Param('collection') collection: string,
    @Param('indexName') indexName: string,
    @Param('indexValue') indexValue: string,
    @Query() raw: Record<string, unknown>,
  ): Promise<DataItemDto> {
    const item = await this.data.getItem(
      principal,
      collection,
      indexName,
      indexValue,
      this.filterQuery(raw),
    );
    return toItemJson(item);
  }

  /** Sets fields of the one matching item (`$set`); nothing changes when none or several match. */
  @Put(':collection/:indexName/:indexValue')
  @Auth('root', 'sub', 'team')
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
    @Param('collection') collection: string,
    @Param('indexName') indexName: string,
    @Param('indexValue') indexValue: string,
    @Body() body: UpdateDataItemDto,
  ): Promise<DataItemDto> {
    const item = await this.data.updateItem(principal, collection, indexName, indexValue, body);
    return toItemJson(item);
  }

  /** Deletes the one matching item (the body is optional). */
  @Delete(':collection/:indexName/:indexValue')
  @HttpCode(HttpStatus.NO_CONTENT)
  @Auth('root', 'sub', 'team')
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
    @Param('collection') collection: string,
    @Param('indexName') indexName: string,
    @Param('indexValue') indexValue: string,
    @Body() body: DeleteDataItemDto,
  ): Promise<void> {
    await this.data.deleteItem(principal, collection, indexName, indexValue, body ?? {});
  }
}

/** The same request with the keyset cursor of the next page. */
function nextUrl(req: Request, raw: Record<string, unknown>, next: Record<string, string>): string {
  const params = new URLSearchParams();
  for (const [key, value] of Object.entries(raw)) {
    if (typeof value === 'string' && !/^(before|after)\[/.test(key)) params.append(key, value);
  }
  for (const [key, value] of Object.entries(next)) params.append(key, value);
  const path = (req.originalUrl ?? req.url).split('?')[0] ?? '';
  return `${path}?${params.toString()}`;
}
