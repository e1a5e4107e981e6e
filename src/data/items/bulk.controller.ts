import { Body, Controller, HttpCode, HttpStatus, Inject, Param, Post } from '@nestjs/common';
import { ApiBadRequestResponse, ApiBody, ApiOkResponse, ApiTags } from '@nestjs/swagger';
import { Auth, CurrentPrincipal, type CustomerPrincipal, NeedsScope } from '../../auth';
import { ProblemDto } from '../../common/errors';
import { Reply } from '../../common/http/reply';
import { answerWarnings } from '../rules/schema/schema-warnings';
import { APP_CONFIG, type AppConfig } from '../../config';
import { CollectionNamePipe } from '../collections/collection-name.pipe';
import { CollectionGrant } from '../collections/collection-grant';
import { CollectionParam } from '../data.openapi';
import { toBulkInputs } from '../query/data-requests';
import { dataBudget } from '../query/json-guard';
import { type JsonBudget } from '../../common/json';
import { BulkCreateDataItemsDto, BulkCreateResultDto } from './dto/data-batch.dto';
import { ItemBatchesService } from './item-batches.service';

/** `/data/{collection}/bulk`: many creates in one request. */
@ApiTags('data')
@CollectionGrant()
@Controller('data')
@NeedsScope('data:write')
@Auth('root', 'sub', 'team')
export class BulkController {
  private readonly budget: JsonBudget;

  constructor(
    private readonly batches: ItemBatchesService,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {
    this.budget = dataBudget(config.limits);
  }

  /**
   * Creates many items, each under the rules of POST /data/{collection}; one item's failure does
   * not stop the others (unordered). 200 with one result per item. Past the collection's item
   * limit each item left over is refused alone: status 409, ITEM_QUOTA_EXCEEDED (or
   * PLAN_LIMIT_EXCEEDED under a plan) with `limit`, `max`, `usage` and `plan`.
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
  ): Promise<Reply<BulkCreateResultDto>> {
    const inputs = toBulkInputs(body, this.budget, this.config.limits.bulkMaxItems);
    const results = await this.batches.createMany(principal, collection, inputs);
    const created = results.filter((r) => r.status === 200).length;
    // The header lists the warnings of every item created, in the items' order.
    return answerWarnings(
      Reply.of({ results, created, failed: results.length - created }),
      results.flatMap((r) => ('warnings' in r && r.warnings ? r.warnings : [])),
    );
  }
}
