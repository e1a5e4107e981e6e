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
} from '@nestjs/common';
import {
  ApiBadRequestResponse,
  ApiBody,
  ApiConflictResponse,
  ApiForbiddenResponse,
  ApiExtraModels,
  ApiNoContentResponse,
  ApiNotFoundResponse,
  ApiOkResponse,
  ApiTags,
  getSchemaPath,
} from '@nestjs/swagger';
import type { Request } from 'express';
import {
  Auth,
  AuthHeadersFirst,
  CurrentPrincipal,
  type CustomerPrincipal,
  NeedsScope,
} from '../../auth';
import { ProblemDto } from '../../common/errors';
import { answerWarnings } from '../rules/schema/schema-warnings';
import { IfMatchHeader } from '../../common/http/conditional';
import type { IfMatch } from '../../common/http/etag';
import { ApiConditional } from '../../common/http/openapi-conditional';
import { Reply } from '../../common/http/reply';
import { keysetLink } from '../../common/pagination/keyset';
import { APP_CONFIG, type AppConfig } from '../../config';
import { CollectionNamePipe } from '../collections/collection-name.pipe';
import { CollectionGrant } from '../collections/collection-grant';
import { CollectionsService } from '../collections/collections.service';
import { CollectionParam, FEED_POSITION, FEED_POSITION_HEADER, ListQueries } from '../data.openapi';
import {
  parseDataQuery,
  toItemListQuery,
  toItemsChangeRequest,
  toItemsRemovalRequest,
  toNewItemRequest,
} from '../query/data-requests';
import { filterLimits, type FilterLimits } from '../query/filter-operators';
import { dataBudget } from '../query/json-guard';
import { type JsonBudget } from '../../common/json';
import {
  DeleteDataItemsDto,
  DeleteManyResultDto,
  UpdateDataItemsDto,
  UpdateManyResultDto,
} from './dto/data-batch.dto';
import {
  CREATE_ITEM_EXAMPLES,
  CreateDataItemDto,
  DATA_ITEM_EXAMPLE,
  DataItemDto,
  ITEM_OR_PROJECTION,
  ProjectedDataItemDto,
  toItemJson,
} from './dto/data-item.dto';
import { parseExpandRequest } from '../expand/expand-request';
import { ExpandQuery } from '../expand/expand.openapi';
import { ItemExpansions } from '../expand/item-expansions.service';
import { ItemBatchesService } from './item-batches.service';
import { ItemEvents } from './item-events';
import { itemETag } from './item-revision';
import { ItemWritesService } from './item-writes.service';
import { ItemsService } from './items.service';
import { SEARCH_PARAM } from '../search/search-query';
import { SearchConflictResponse, SearchQuery } from '../search/search-query.openapi';

/** Whether a find-or-create created its item. */
const ITEM_CREATED_HEADER = 'X-Item-Created';
/**
 * `/data/{collection}`: lists, creates (or finds or creates), updates and deletes by filter,
 * and drops the collection.
 */
@ApiTags('data')
@ApiExtraModels(DataItemDto, ProjectedDataItemDto, UpdateManyResultDto)
@CollectionGrant()
@Controller('data')
export class CollectionItemsController {
  private readonly budget: JsonBudget;
  private readonly filterLimits: FilterLimits;

  constructor(
    private readonly items: ItemsService,
    private readonly collections: CollectionsService,
    private readonly writes: ItemWritesService,
    private readonly batches: ItemBatchesService,
    private readonly itemEvents: ItemEvents,
    private readonly expansions: ItemExpansions,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {
    this.budget = dataBudget(config.limits);
    this.filterLimits = filterLimits(config.limits);
  }

  /** Lists items (keyset pagination); 204 without a body when nothing matches. */
  @Get(':collection')
  @NeedsScope('data:read')
  @Auth('root', 'sub', 'team', 'publishable')
  @CollectionParam()
  @ListQueries()
  @SearchQuery()
  @ExpandQuery()
  @ApiOkResponse({
    description:
      'Items (projected ones with `fields`); `Link: <…>; rel="next"` when a further page exists',
    schema: { type: 'array', items: ITEM_OR_PROJECTION },
    example: [DATA_ITEM_EXAMPLE],
    headers: FEED_POSITION,
  })
  @ApiNoContentResponse({
    description: 'Nothing matches (or the collection does not exist)',
    headers: FEED_POSITION,
  })
  @ApiBadRequestResponse({
    type: ProblemDto,
    description:
      'Bad collection name or query (`q` and `expand` included); PROTECTED_FIELD: a filter, sort, cursor or `fields` names a field the access rules hide from this key (below an expanded path: the target collection’s rules); SEARCH_NOT_CONFIGURED: `q` on a collection without a search configuration',
  })
  @SearchConflictResponse()
  async listDataItems(
    @CurrentPrincipal() principal: CustomerPrincipal,
    @Param('collection', CollectionNamePipe) collection: string,
    @Query() raw: Record<string, unknown>,
    @Req() req: Request,
  ): Promise<Reply<DataItemDto[]>> {
    const parsed = parseDataQuery(raw, this.config.limits, { params: [SEARCH_PARAM, 'expand'] });
    const query = toItemListQuery(parsed, this.filterLimits);
    const expand = parseExpandRequest(parsed.params.expand, query.projection);
    const expansions = await this.expansions.prepare(principal, expand.expansions);
    // Read before the list: every change after it is in the feed after it (none is missed).
    const position = await this.itemEvents.feedPosition(principal);
    const page = await this.items.list(principal, collection, {
      ...query,
      projection: expand.projection,
    });
    const feedPosition = position === null ? undefined : String(position);
    if (page.items.length === 0)
      return Reply.noContent<DataItemDto[]>().header(FEED_POSITION_HEADER, feedPosition);
    const items = page.items.map((item) => toItemJson(item));
    const reply = Reply.of(await this.expansions.expand(expansions, items)).header(
      FEED_POSITION_HEADER,
      feedPosition,
    );
    if (!page.next) return reply;
    const path = (req.originalUrl ?? req.url).split('?')[0] ?? '';
    return reply.header('Link', keysetLink(path, raw, page.next.side, page.next.cursor));
  }

  /** Stores an item; stamps the owner field and the timestamps. */
  @Post(':collection')
  @NeedsScope('data:write')
  @Auth('root', 'sub', 'team')
  @HttpCode(HttpStatus.OK)
  @ApiConditional('create')
  @CollectionParam()
  @ApiBody({
    type: CreateDataItemDto,
    examples: CREATE_ITEM_EXAMPLES,
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
  @ApiForbiddenResponse({
    type: ProblemDto,
    description:
      "ACCESS_RULE: a sub key's item is outside the collection's create rule, or sets a protected field",
  })
  @ApiConflictResponse({
    type: ProblemDto,
    description:
      'DUPLICATE_ITEM (with `existingId` when the caller may read that item) for a taken uniqueField value or _id; COLLECTION_QUOTA_EXCEEDED; ITEM_QUOTA_EXCEEDED (MAX_ITEMS_PER_COLLECTION): the collection holds as many items as allowed; PLAN_LIMIT_EXCEEDED in place of either under a plan (its collections or itemsPerCollection); all with members `limit`, `max`, `usage`, `plan` (find-or-create: only when it would create)',
  })
  async createDataItem(
    @CurrentPrincipal() principal: CustomerPrincipal,
    @Param('collection', CollectionNamePipe) collection: string,
    @Body() body: CreateDataItemDto,
  ): Promise<Reply<DataItemDto>> {
    const request = toNewItemRequest(body, this.budget);
    if (request.onConflict === 'return') {
      const { item, json, warnings, created } = await this.items.findOrCreate(
        principal,
        collection,
        request,
      );
      const reply = Reply.written(itemETag(item), json).header(
        ITEM_CREATED_HEADER,
        String(created),
      );
      return answerWarnings(reply, warnings);
    }
    const { item, json, warnings } = await this.items.create(principal, collection, request);
    return answerWarnings(Reply.written(itemETag(item), json), warnings);
  }

  /**
   * Sets fields of the items the filter selects: with `multi: true` every one (`{matched,
   * modified}`), otherwise exactly one (the item; 404 when none, 409 when several).
   */
  @Put(':collection')
  @NeedsScope('data:write')
  @AuthHeadersFirst({
    kinds: ['root', 'sub', 'team'],
    forbidden: 'A sub key tried to change the owner field',
  })
  @ApiConditional('selective-write')
  @CollectionParam()
  @ApiBody({
    type: UpdateDataItemsDto,
    examples: {
      many: {
        value: {
          filter: { status: 'open', total: { lt: 1 } },
          values: { status: 'void' },
          multi: true,
        },
      },
      one: { value: { filter: { orderNumber: 'A-1001' }, values: { status: 'paid' } } },
    },
  })
  @ApiOkResponse({
    description: 'multi: true → `{matched, modified}`; otherwise the updated item (with its ETag)',
    schema: {
      anyOf: [{ $ref: getSchemaPath(UpdateManyResultDto) }, { $ref: getSchemaPath(DataItemDto) }],
    },
    example: { matched: 12, modified: 12 },
  })
  @ApiBadRequestResponse({
    type: ProblemDto,
    description: 'No filter, an empty one, or bad values',
  })
  @ApiForbiddenResponse({
    type: ProblemDto,
    description:
      "ACCESS_RULE: a sub key's write is outside the collection's access rules (the item before or as it would be), or sets a protected field; with multi, any matched item so refuses the whole update (nothing written). A sub key tried to change the owner field",
  })
  @ApiNotFoundResponse({
    type: ProblemDto,
    description: 'ITEM_NOT_FOUND (without multi; also an item outside the read rule)',
  })
  @ApiConflictResponse({
    type: ProblemDto,
    description:
      'AMBIGUOUS_MATCH (without multi); DUPLICATE_ITEM: a unique index refuses the values',
  })
  async updateDataItems(
    @CurrentPrincipal() principal: CustomerPrincipal,
    @Param('collection', CollectionNamePipe) collection: string,
    @Body() body: UpdateDataItemsDto,
    @IfMatchHeader() ifMatch: IfMatch,
  ): Promise<Reply<UpdateManyResultDto | DataItemDto>> {
    const request = toItemsChangeRequest(body, this.budget, this.filterLimits);
    if (request.multi) {
      const { value, warnings } = await this.batches.updateMany(
        principal,
        collection,
        request,
        ifMatch,
      );
      return answerWarnings(Reply.of<UpdateManyResultDto | DataItemDto>(value), warnings);
    }
    const { item, json, warnings } = await this.writes.updateWhere(
      principal,
      collection,
      request,
      ifMatch,
    );
    return answerWarnings(Reply.written(itemETag(item), json), warnings);
  }

  /**
   * With a body: deletes the items its `filter` selects — with `multi: true` every one (200
   * `{deleted}`), otherwise exactly one (204; 404 when none, 409 when several). Without a body:
   * drops the whole collection, its items and indexes, and frees its quota slot (root and team
   * keys; 204, 404 when there is no such collection). A body without `filter` is a 400, so a
   * filtered delete gone wrong never drops the collection.
   */
  @Delete(':collection')
  @NeedsScope('data:write')
  @AuthHeadersFirst({
    kinds: ['root', 'sub', 'team'],
    forbidden: 'A sub key tried to drop the collection',
  })
  @ApiConditional('selective-write')
  @CollectionParam()
  @ApiBody({
    type: DeleteDataItemsDto,
    required: false,
    description: 'The items to delete. Without a body the collection itself is dropped.',
    examples: {
      many: { value: { filter: { status: 'void' }, multi: true } },
      one: { value: { filter: { orderNumber: 'A-1001' } } },
    },
  })
  @ApiOkResponse({ type: DeleteManyResultDto, description: 'multi: true → how many were deleted' })
  @ApiNoContentResponse({
    description:
      'Without multi: the one item was deleted; without a body: the collection was dropped',
  })
  @ApiBadRequestResponse({
    type: ProblemDto,
    description: 'A body without filter, or an empty one; If-Match on a drop',
  })
  @ApiForbiddenResponse({
    type: ProblemDto,
    description:
      "ACCESS_RULE: a sub key's delete reaches a readable item outside the collection's delete rule; with multi nothing is deleted",
  })
  @ApiNotFoundResponse({
    type: ProblemDto,
    description:
      'ITEM_NOT_FOUND (without multi; also an item outside the read rule); COLLECTION_NOT_FOUND (drop)',
  })
  @ApiConflictResponse({ type: ProblemDto, description: 'AMBIGUOUS_MATCH (without multi)' })
  async deleteDataItems(
    @CurrentPrincipal() principal: CustomerPrincipal,
    @Param('collection', CollectionNamePipe) collection: string,
    // Typed without `| undefined`, or the validation pipe would not know the DTO (metadata).
    @Body() body: DeleteDataItemsDto,
    @IfMatchHeader() ifMatch: IfMatch,
  ): Promise<Reply<DeleteManyResultDto>> {
    // AbsentBodyAllowed: the pipe passes an absent body on as undefined.
    if ((body as DeleteDataItemsDto | undefined) === undefined) {
      await this.collections.drop(principal, collection, ifMatch);
    } else {
      const request = toItemsRemovalRequest(body, this.filterLimits);
      if (request.multi)
        return Reply.of(await this.batches.deleteMany(principal, collection, request, ifMatch));
      await this.writes.removeWhere(principal, collection, request, ifMatch);
    }
    return Reply.noContent();
  }
}
