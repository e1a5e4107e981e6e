import { Controller, Get } from '@nestjs/common';
import { ApiOkResponse, ApiTags } from '@nestjs/swagger';
import { Auth, CurrentPrincipal, type CustomerPrincipal, NeedsScope } from '../../auth';
import { DataCollectionDto } from '../indexes/dto/data-index.dto';
import { CollectionsService } from './collections.service';

/** `/data`: the caller's collections. (A collection is dropped by DELETE /data/{collection}.) */
@ApiTags('data')
@Controller('data')
export class CollectionsController {
  constructor(private readonly collections: CollectionsService) {}

  /** Lists the caller's collections in the request branch (sorted by name) with their indexes. */
  @Get()
  @NeedsScope('data:read')
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
}
