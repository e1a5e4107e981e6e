import { Body, Controller, Inject, Param, Patch, Res } from '@nestjs/common';
import {
  ApiBadRequestResponse,
  ApiBody,
  ApiConflictResponse,
  ApiForbiddenResponse,
  ApiNotFoundResponse,
  ApiOkResponse,
  ApiTags,
} from '@nestjs/swagger';
import type { Response } from 'express';
import { Auth, CurrentPrincipal, type CustomerPrincipal } from '../../auth';
import { ProblemDto } from '../../common/errors';
import { answerWrite, IfMatchHeader } from '../../common/http/conditional';
import type { IfMatch } from '../../common/http/etag';
import { ApiConditional } from '../../common/http/openapi-conditional';
import { APP_CONFIG, type AppConfig } from '../../config';
import { applyArrayOperation, parseArrayOperation } from './array-operations';
import { CollectionNamePipe } from '../collections/collection-name.pipe';
import { ownerFieldOf } from '../query/data-requests';
import { ItemParams } from '../data.openapi';
import { ARRAY_OPERATION_BODY, ArrayOperationDto } from './dto/data-array.dto';
import { DATA_ITEM_EXAMPLE, DataItemDto, toItemJson } from './dto/data-item.dto';
import { itemETag } from './item-revision';
import { ItemsService } from './items.service';
import { dataBudget, guardDocument, type JsonBudget } from '../query/json-guard';
import { IdempotentWrites } from '../../common/idempotency';

/** Array operations on one item: push, update an element, remove elements. */
@ApiTags('data')
@IdempotentWrites()
@Controller('data')
@Auth('root', 'sub', 'team')
export class DataArraysController {
  private readonly budget: JsonBudget;

  constructor(
    private readonly items: ItemsService,
    @Inject(APP_CONFIG) config: AppConfig,
  ) {
    this.budget = dataBudget(config.limits);
  }

  /**
   * Applies one array operation to the one item the route selects (the selection and owner rules
   * of PUT): push a value, set fields of the first element that matches, or remove an element
   * by position or every element that matches.
   */
  @Patch(':collection/:indexName/:indexValue')
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
    description: 'A sub key tried to change the owner field',
  })
  @ApiNotFoundResponse({
    type: ProblemDto,
    description: 'ITEM_NOT_FOUND; ELEMENT_NOT_FOUND: no element matches, or no such position',
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
    @Res({ passthrough: true }) res: Response,
  ): Promise<DataItemDto> {
    const operation = parseArrayOperation({ ...body }, this.budget);
    const ownerField = ownerFieldOf(body.authField);
    const item = await this.items.modifyOne(
      principal,
      collection,
      { indexName, indexValue },
      ownerField,
      operation.field,
      (current) =>
        guardDocument({ value: applyArrayOperation(current, operation) }, 'value', this.budget),
      ifMatch,
    );
    return answerWrite(res, itemETag(item), toItemJson(item));
  }
}
