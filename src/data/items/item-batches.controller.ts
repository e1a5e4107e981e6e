import {
  Body,
  Controller,
  Delete,
  HttpCode,
  HttpStatus,
  Inject,
  Param,
  Post,
  Put,
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
import type { Response } from 'express';
import { Auth, CurrentPrincipal, type CustomerPrincipal } from '../../auth';
import { ForbiddenError, ProblemDto, ValidationFailedError } from '../../common/errors';
import { answerWrite, IfMatchHeader } from '../../common/http/conditional';
import type { IfMatch } from '../../common/http/etag';
import { ApiConditional } from '../../common/http/openapi-conditional';
import { APP_CONFIG, type AppConfig } from '../../config';
import { CollectionNamePipe } from '../collections/collection-name.pipe';
import { CollectionsService } from '../collections/collections.service';
import { toBulkInputs, toItemsChangeRequest, toItemsRemovalRequest } from '../query/data-requests';
import { CollectionParam } from '../data.openapi';
import {
  BulkCreateDataItemsDto,
  BulkCreateResultDto,
  DeleteDataItemsDto,
  DeleteManyResultDto,
  UpdateDataItemsDto,
  UpdateManyResultDto,
} from './dto/data-batch.dto';
import { DataItemDto, toItemJson } from './dto/data-item.dto';
import { filterLimits, type FilterLimits } from '../query/filter-operators';
import { ItemBatchesService } from './item-batches.service';
import { itemETag } from './item-revision';
import { ItemsService } from './items.service';
import { dataBudget, type JsonBudget } from '../query/json-guard';
import { IdempotentWrites } from '../../common/idempotency';

/** If-Match names one representation: a write of many items has none to name. */
function refuseIfMatch(ifMatch: IfMatch, multi: boolean): void {
  if (multi && ifMatch.kind !== 'absent')
    throw new ValidationFailedError([
      { field: 'If-Match', message: 'goes with a single-item write, not with multi: true' },
    ]);
}

/** Writes of many items: bulk creates, and updates and deletes by filter. */
@ApiTags('data')
@ApiExtraModels(DataItemDto, UpdateManyResultDto)
@IdempotentWrites()
@Controller('data')
@Auth('root', 'sub', 'team')
export class DataBatchController {
  private readonly budget: JsonBudget;
  private readonly filterLimits: FilterLimits;

  constructor(
    private readonly batches: ItemBatchesService,
    private readonly items: ItemsService,
    private readonly collections: CollectionsService,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {
    this.budget = dataBudget(config.limits);
    this.filterLimits = filterLimits(config.limits);
  }

  /**
   * Creates many items, each under the rules of POST /data/{collection}; one item's failure does
   * not stop the others (unordered). 200 with one result per item.
   */
  @Post(':collection/bulk')
  @HttpCode(HttpStatus.OK)
  @CollectionParam()
  @ApiBody({
    type: BulkCreateDataItemsDto,
    examples: {
      bulk: {
        value: {
          items: [
            { orderNumber: 'A-1001', total: 42.5 },
            { orderNumber: 'A-1002', total: 7 },
          ],
          uniqueField: 'orderNumber',
        },
      },
    },
  })
  @ApiOkResponse({
    type: BulkCreateResultDto,
    example: {
      results: [
        { index: 0, status: 200, _id: '665f1c2a9b1e8a0012345679' },
        {
          index: 1,
          status: 409,
          error: {
            code: 'DUPLICATE_ITEM',
            detail: "An item with this value of 'orderNumber' already exists.",
            existingId: '665f1c2a9b1e8a0012345678',
          },
        },
      ],
      created: 1,
      failed: 1,
    },
  })
  @ApiBadRequestResponse({
    type: ProblemDto,
    description: 'No items, too many, or a bad uniqueField/authField',
  })
  async bulkCreateDataItems(
    @CurrentPrincipal() principal: CustomerPrincipal,
    @Param('collection', CollectionNamePipe) collection: string,
    @Body() body: BulkCreateDataItemsDto,
  ): Promise<BulkCreateResultDto> {
    const inputs = toBulkInputs(body, this.budget, this.config.limits.bulkMaxItems);
    const results = await this.batches.createMany(principal, collection, inputs);
    const created = results.filter((r) => r.status === 200).length;
    return { results, created, failed: results.length - created };
  }

  /**
   * Sets fields of the items the filter selects: with `multi: true` every one (`{matched,
   * modified}`), otherwise exactly one (the item; 404 when none, 409 when several).
   */
  @Put(':collection')
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
    description: 'A sub key tried to change the owner field',
  })
  @ApiNotFoundResponse({ type: ProblemDto, description: 'ITEM_NOT_FOUND (without multi)' })
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
    @Res({ passthrough: true }) res: Response,
  ): Promise<UpdateManyResultDto | DataItemDto> {
    const request = toItemsChangeRequest(body, this.budget, this.filterLimits);
    refuseIfMatch(ifMatch, request.multi);
    if (request.multi) return this.batches.updateMany(principal, collection, request);
    const item = await this.items.updateWhere(principal, collection, request, ifMatch);
    return answerWrite(res, itemETag(item), toItemJson(item));
  }

  /**
   * With a body: deletes the items its `filter` selects — with `multi: true` every one (200
   * `{deleted}`), otherwise exactly one (204; 404 when none, 409 when several). Without a body:
   * drops the whole collection, its items and indexes, and frees its quota slot (root and team
   * keys; 204, 404 when there is no such collection). A body without `filter` is a 400, so a
   * filtered delete gone wrong never drops the collection.
   */
  @Delete(':collection')
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
  @ApiForbiddenResponse({ type: ProblemDto, description: 'A sub key tried to drop the collection' })
  @ApiNotFoundResponse({
    type: ProblemDto,
    description: 'ITEM_NOT_FOUND (without multi); COLLECTION_NOT_FOUND (drop)',
  })
  @ApiConflictResponse({ type: ProblemDto, description: 'AMBIGUOUS_MATCH (without multi)' })
  async deleteDataItems(
    @CurrentPrincipal() principal: CustomerPrincipal,
    @Param('collection', CollectionNamePipe) collection: string,
    // Typed without `| undefined`, or the validation pipe would not know the DTO (metadata).
    @Body() body: DeleteDataItemsDto,
    @IfMatchHeader() ifMatch: IfMatch,
    @Res({ passthrough: true }) res: Response,
  ): Promise<DeleteManyResultDto | undefined> {
    // AbsentBodyAllowed: the pipe passes an absent body on as undefined.
    if ((body as DeleteDataItemsDto | undefined) === undefined) {
      await this.dropCollection(principal, collection, ifMatch);
    } else {
      const request = toItemsRemovalRequest(body, this.filterLimits);
      refuseIfMatch(ifMatch, request.multi);
      if (request.multi) return this.batches.deleteMany(principal, collection, request);
      await this.items.removeWhere(principal, collection, request, ifMatch);
    }
    res.status(HttpStatus.NO_CONTENT);
    return undefined;
  }

  private async dropCollection(
    principal: CustomerPrincipal,
    collection: string,
    ifMatch: IfMatch,
  ): Promise<void> {
    if (principal.kind === 'sub')
      throw new ForbiddenError('A sub key may not drop a collection; root and team keys may.');
    if (ifMatch.kind !== 'absent')
      throw new ValidationFailedError([
        { field: 'If-Match', message: 'goes with a single-item write, not with a drop' },
      ]);
    await this.collections.drop(principal, collection);
  }
}
