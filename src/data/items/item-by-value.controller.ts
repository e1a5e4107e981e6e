import {
  Body,
  Controller,
  Delete,
  Get,
  HttpCode,
  HttpStatus,
  Inject,
  Param,
  Patch,
  Put,
  Query,
} from '@nestjs/common';
import {
  ApiBadRequestResponse,
  ApiBody,
  ApiConflictResponse,
  ApiForbiddenResponse,
  ApiNoContentResponse,
  ApiNotFoundResponse,
  ApiOkResponse,
  ApiTags,
} from '@nestjs/swagger';
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
import { APP_CONFIG, type AppConfig } from '../../config';
import { CollectionNamePipe } from '../collections/collection-name.pipe';
import { CollectionGrant } from '../collections/collection-grant';
import { FieldsQuery, FilterQueries, ItemParams } from '../data.openapi';
import {
  ownerFieldOf,
  parseDataQuery,
  toItemChangeRequest,
  toItemQuery,
  toItemRemovalRequest,
} from '../query/data-requests';
import { filterLimits, type FilterLimits } from '../query/filter-operators';
import { dataBudget } from '../query/json-guard';
import { type JsonBudget } from '../../common/json';
import { parseProjection, projectedETag } from '../query/projection';
import { parseArrayOperation } from './array-operations';
import { ARRAY_OPERATION_BODY, ArrayOperationDto } from './dto/data-array.dto';
import {
  DATA_ITEM_EXAMPLE,
  DataItemDto,
  DeleteDataItemDto,
  ITEM_OR_PROJECTION,
  toItemJson,
  UpdateDataItemDto,
} from './dto/data-item.dto';
import { expandedETag, parseExpandRequest } from '../expand/expand-request';
import { ExpandQuery } from '../expand/expand.openapi';
import { ItemExpansions } from '../expand/item-expansions.service';
import { itemETag } from './item-revision';
import { ItemWritesService } from './item-writes.service';
import { ItemsService } from './items.service';

/** `/data/{collection}/{indexName}/{indexValue}`, the one item a field value selects. */
@ApiTags('data')
@CollectionGrant()
@Controller('data')
export class ItemByValueController {
  private readonly budget: JsonBudget;
  private readonly filterLimits: FilterLimits;

  constructor(
    private readonly items: ItemsService,
    private readonly writes: ItemWritesService,
    private readonly expansions: ItemExpansions,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {
    this.budget = dataBudget(config.limits);
    this.filterLimits = filterLimits(config.limits);
  }

  /** Reads the one item whose field indexName equals indexValue (`_id`: the identifier). */
  @Get(':collection/:indexName/:indexValue')
  @NeedsScope('data:read')
  @Auth('root', 'sub', 'team', 'publishable')
  @ApiConditional('read')
  @ItemParams()
  @FilterQueries()
  @FieldsQuery()
  @ExpandQuery()
  @ApiOkResponse({
    description:
      'The item (projected with `fields`; never with a field the access rules hide; with `expand`, its references expanded and an ETag that covers the expanded items)',
    schema: ITEM_OR_PROJECTION,
    example: DATA_ITEM_EXAMPLE,
  })
  @ApiBadRequestResponse({
    type: ProblemDto,
    description:
      'VALIDATION_FAILED (`expand` included); PROTECTED_FIELD: the route field, a filter or `fields` names a field the access rules hide from this key (below an expanded path: the target collection’s rules)',
  })
  @ApiNotFoundResponse({
    type: ProblemDto,
    description:
      "ITEM_NOT_FOUND: no item matches, or none the key's read rule reads (the same answer)",
  })
  @ApiConflictResponse({ type: ProblemDto, description: 'AMBIGUOUS_MATCH: more than one matches' })
  async getDataItem(
    @CurrentPrincipal() principal: CustomerPrincipal,
    @Param('collection', CollectionNamePipe) collection: string,
    @Param('indexName') indexName: string,
    @Param('indexValue') indexValue: string,
    @Query() raw: Record<string, unknown>,
  ): Promise<Reply<DataItemDto>> {
    // Filters and `fields` only: paging parameters would be ignored, so they are refused.
    const query = parseDataQuery(raw, this.config.limits, {
      params: ['expand'],
      refuse: { paging: true, fields: false },
    });
    const expand = parseExpandRequest(query.params.expand, parseProjection(query.params.fields));
    const expansions = await this.expansions.prepare(principal, expand.expansions);
    const item = await this.items.get(
      principal,
      collection,
      indexName,
      indexValue,
      toItemQuery(query, this.filterLimits),
      expand.projection,
    );
    const etag = projectedETag(itemETag(item), expand.projection);
    if (expansions.length === 0) return Reply.read(etag, () => toItemJson(item));
    const [expanded] = await this.expansions.expand(expansions, [toItemJson(item)]);
    return Reply.read(expandedETag(etag, expanded), () => expanded as DataItemDto);
  }

  /** Sets fields of the one matching item (`$set`); nothing changes when none or several match. */
  @Put(':collection/:indexName/:indexValue')
  @NeedsScope('data:write')
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
    description:
      "A sub key tried to change the owner field; ACCESS_RULE: a sub key's update is outside the collection's update rule (the item before or as it would be), or sets a protected field",
  })
  @ApiNotFoundResponse({
    type: ProblemDto,
    description: 'ITEM_NOT_FOUND (also an item outside the read rule)',
  })
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
  ): Promise<Reply<DataItemDto>> {
    const request = toItemChangeRequest(body, this.budget, this.filterLimits);
    const { item, json, warnings } = await this.writes.update(
      principal,
      collection,
      indexName,
      indexValue,
      request,
      ifMatch,
    );
    return answerWarnings(Reply.written(itemETag(item), json), warnings);
  }

  /** Deletes the one matching item (the body is optional). */
  @Delete(':collection/:indexName/:indexValue')
  @NeedsScope('data:write')
  @Auth('root', 'sub', 'team')
  @HttpCode(HttpStatus.NO_CONTENT)
  @ApiConditional('write')
  @ItemParams()
  @ApiBody({
    type: DeleteDataItemDto,
    required: false,
    examples: { filtered: { value: { filter: { status: 'cancelled' } } } },
  })
  @ApiNoContentResponse({ description: 'Deleted' })
  @ApiBadRequestResponse({ type: ProblemDto })
  @ApiForbiddenResponse({
    type: ProblemDto,
    description:
      "ACCESS_RULE: a sub key's delete of a readable item outside the collection's delete rule",
  })
  @ApiNotFoundResponse({
    type: ProblemDto,
    description: 'ITEM_NOT_FOUND (also an item outside the read rule)',
  })
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
    await this.writes.remove(principal, collection, indexName, indexValue, request, ifMatch);
  }

  /**
   * Applies one array operation to the one item the route selects (the selection and owner rules
   * of PUT): push a value, set fields of the first element that matches, or remove an element
   * by position or every element that matches.
   */
  @Patch(':collection/:indexName/:indexValue')
  @NeedsScope('data:write')
  @AuthHeadersFirst({
    kinds: ['root', 'sub', 'team'],
    forbidden: 'A sub key tried to change the owner field',
  })
  @ApiConditional('write')
  @ItemParams()
  @ApiBody({
    schema: ARRAY_OPERATION_BODY,
    examples: {
      push: { value: { push: { field: 'tags', value: 'urgent' } } },
      updateElement: {
        value: { updateElement: { field: 'lines', match: { sku: 'A-1' }, values: { qty: 3 } } },
      },
      removeAt: { value: { removeElement: { field: 'lines', position: 0 } } },
      removeMatching: { value: { removeElement: { field: 'lines', match: { sku: 'A-1' } } } },
    },
  })
  @ApiOkResponse({ type: DataItemDto, example: DATA_ITEM_EXAMPLE })
  @ApiBadRequestResponse({
    type: ProblemDto,
    description: 'Not exactly one operation, or a bad one',
  })
  @ApiForbiddenResponse({
    type: ProblemDto,
    description:
      "A sub key's operation on the owner field; ACCESS_RULE: outside the collection's update rule (the item before or as it would be), or on a protected field",
  })
  @ApiNotFoundResponse({
    type: ProblemDto,
    description:
      'ITEM_NOT_FOUND (also an item outside the read rule); ELEMENT_NOT_FOUND: no element matches, or no such position',
  })
  @ApiConflictResponse({
    type: ProblemDto,
    description:
      'AMBIGUOUS_MATCH; NOT_AN_ARRAY: the field holds something else; WRITE_CONFLICT: the item kept changing; DUPLICATE_ITEM',
  })
  async modifyDataItemArray(
    @CurrentPrincipal() principal: CustomerPrincipal,
    @Param('collection', CollectionNamePipe) collection: string,
    @Param('indexName') indexName: string,
    @Param('indexValue') indexValue: string,
    @Body() body: ArrayOperationDto,
    @IfMatchHeader() ifMatch: IfMatch,
  ): Promise<Reply<DataItemDto>> {
    const operation = parseArrayOperation({ ...body }, this.budget);
    const ownerField = ownerFieldOf(body.authField);
    const { item, json, warnings } = await this.writes.applyArrayOperation(
      principal,
      collection,
      { indexName, indexValue },
      ownerField,
      operation,
      ifMatch,
    );
    return answerWarnings(Reply.written(itemETag(item), json), warnings);
  }
}
