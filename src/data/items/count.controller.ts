import { Controller, Get, Inject, Param, Query } from '@nestjs/common';
import { ApiBadRequestResponse, ApiOkResponse, ApiTags } from '@nestjs/swagger';
import { Auth, CurrentPrincipal, NeedsScope, type CustomerPrincipal } from '../../auth';
import { ProblemDto } from '../../common/errors';
import { APP_CONFIG, type AppConfig } from '../../config';
import { CollectionNamePipe } from '../collections/collection-name.pipe';
import { CollectionGrant } from '../collections/collection-grant';
import { CollectionParam, FilterQueries } from '../data.openapi';
import { parseDataQuery, toItemQuery } from '../query/data-requests';
import { filterLimits, type FilterLimits } from '../query/filter-operators';
import { DataCountDto } from './dto/data-item.dto';
import { ItemsService } from './items.service';
import { SEARCH_PARAM } from '../search/search-query';
import { SearchConflictResponse, SearchQuery } from '../search/search-query.openapi';

/** `/data/{collection}/count`. */
@ApiTags('data')
@CollectionGrant()
@Controller('data')
export class CountController {
  private readonly filterLimits: FilterLimits;

  constructor(
    private readonly items: ItemsService,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {
    this.filterLimits = filterLimits(config.limits);
  }

  /** Counts the items that match (an unfiltered count by a root or team key reads collection metadata). */
  @Get(':collection/count')
  @NeedsScope('data:read')
  @Auth('root', 'sub', 'team', 'publishable')
  @CollectionParam()
  @FilterQueries()
  @SearchQuery()
  @ApiOkResponse({ type: DataCountDto })
  @ApiBadRequestResponse({
    type: ProblemDto,
    description:
      'VALIDATION_FAILED; PROTECTED_FIELD: a filter names a field the access rules hide from this key; SEARCH_NOT_CONFIGURED: `q` on a collection without a search configuration',
  })
  @SearchConflictResponse()
  async countDataItems(
    @CurrentPrincipal() principal: CustomerPrincipal,
    @Param('collection', CollectionNamePipe) collection: string,
    @Query() raw: Record<string, unknown>,
  ): Promise<DataCountDto> {
    // Paging parameters would be ignored here, so they are refused, and so is `fields`.
    const filters = parseDataQuery(raw, this.config.limits, {
      params: [SEARCH_PARAM],
      refuse: { paging: true, fields: true },
    });
    const query = toItemQuery(filters, this.filterLimits);
    return { count: await this.items.count(principal, collection, query) };
  }
}
