import { Controller, Get, Inject, Param, Query } from '@nestjs/common';
import { ApiBadRequestResponse, ApiOkResponse, ApiQuery, ApiTags } from '@nestjs/swagger';
import { Auth, CurrentPrincipal, type CustomerPrincipal, NeedsScope } from '../../auth';
import { ProblemDto } from '../../common/errors';
import { APP_CONFIG, type AppConfig } from '../../config';
import { AGGREGATE_OPS, parseAggregate } from './aggregate';
import { CollectionNamePipe } from '../collections/collection-name.pipe';
import { CollectionGrant } from '../collections/collection-grant';
import { parseDataQuery, toItemListQuery, toItemQuery } from '../query/data-requests';
import { CollectionParam, FilterQueries, ListQueries } from '../data.openapi';
import { AggregateResultDto, ExplainResultDto } from './dto/data-analysis.dto';
import { filterLimits, type FilterLimits } from '../query/filter-operators';
import { ItemAnalysisService } from './item-analysis.service';
import { SEARCH_PARAM } from '../search/search-query';
import { SearchConflictResponse, SearchQuery } from '../search/search-query.openapi';
import { MAX_FIELD_NAME_LENGTH, ORDER_PATH_SCHEMA_PATTERN } from '../query/json-guard';

const PATH_SCHEMA = {
  type: 'string',
  pattern: ORDER_PATH_SCHEMA_PATTERN,
  maxLength: MAX_FIELD_NAME_LENGTH,
} as const;

/** Grouped counts and sums, and query plans with index advice; root, sub and team keys. */
@ApiTags('data')
@CollectionGrant()
@Controller('data')
@NeedsScope('data:read')
@Auth('root', 'sub', 'team', 'publishable')
export class AnalysisController {
  private readonly filterLimits: FilterLimits;

  constructor(
    private readonly analysis: ItemAnalysisService,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {
    this.filterLimits = filterLimits(config.limits);
  }

  /** Groups the matching items by one field and counts them, or sums, averages, or compares another field. */
  @Get(':collection/aggregate')
  @CollectionParam()
  @FilterQueries()
  @ApiQuery({
    name: 'groupBy',
    required: true,
    description:
      'Field (dotted path) whose values form the groups; items without it form the group null',
    schema: PATH_SCHEMA,
    example: 'status',
  })
  @ApiQuery({
    name: 'op',
    required: false,
    description: 'count (default), or sum, avg, min, max of `field`; sum and avg read numbers only',
    schema: { type: 'string', enum: [...AGGREGATE_OPS], default: 'count' },
  })
  @ApiQuery({
    name: 'field',
    required: false,
    description: 'The field sum, avg, min and max read (required for them, refused with count)',
    schema: PATH_SCHEMA,
    example: 'total',
  })
  @ApiOkResponse({
    type: AggregateResultDto,
    example: {
      groups: [
        { key: 'open', value: 3 },
        { key: 'paid', value: 12 },
      ],
      truncated: false,
    },
  })
  @ApiBadRequestResponse({
    type: ProblemDto,
    description:
      'VALIDATION_FAILED; PROTECTED_FIELD: a filter, `groupBy` or `field` names a field the access rules hide from this key',
  })
  async aggregateDataItems(
    @CurrentPrincipal() principal: CustomerPrincipal,
    @Param('collection', CollectionNamePipe) collection: string,
    @Query() raw: Record<string, unknown>,
  ): Promise<AggregateResultDto> {
    const query = parseDataQuery(raw, this.config.limits, {
      params: ['groupBy', 'op', 'field'],
      refuse: { paging: true, fields: true },
      only: 'GET /data/{collection} and /explain',
    });
    const request = parseAggregate(query.params);
    return this.analysis.aggregate(
      principal,
      collection,
      toItemQuery(query, this.filterLimits),
      request,
    );
  }

  /** What the list with these parameters does on the database, and the index that would serve it. */
  @Get(':collection/explain')
  @CollectionParam()
  @ListQueries()
  @SearchQuery()
  @ApiOkResponse({
    type: ExplainResultDto,
    example: {
      indexUsed: null,
      stage: 'SORT',
      docsExamined: 5000,
      suggestion: { fields: { status: 1, _createdAt: -1, total: 1 } },
    },
  })
  @ApiBadRequestResponse({
    type: ProblemDto,
    description:
      'VALIDATION_FAILED; PROTECTED_FIELD: a filter, sort, cursor or `fields` names a field the access rules hide from this key; SEARCH_NOT_CONFIGURED: `q` on a collection without a search configuration',
  })
  @SearchConflictResponse()
  async explainDataItems(
    @CurrentPrincipal() principal: CustomerPrincipal,
    @Param('collection', CollectionNamePipe) collection: string,
    @Query() raw: Record<string, unknown>,
  ): Promise<ExplainResultDto> {
    const query = parseDataQuery(raw, this.config.limits, { params: [SEARCH_PARAM] });
    return this.analysis.explain(principal, collection, toItemListQuery(query, this.filterLimits));
  }
}
