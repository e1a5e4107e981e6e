import { Inject, Injectable } from '@nestjs/common';
import type { CustomerPrincipal } from '../../auth';
import { isNotImplemented } from '../../common/errors';
import { APP_CONFIG, type AppConfig } from '../../config';
import {
  aggregatePipeline,
  groupInProcess,
  toAggregateResult,
  type AggregateRequest,
  type AggregateResult,
} from './aggregate';
import { CollectionsService } from '../collections/collections.service';
import { itemFilter } from '../rules/expiry/live-items';
import type { ItemListQuery, ItemQuery } from '../query/data-requests';
import { ItemsRepository } from '../items/items.repository';
import { conditionPaths, readMatchOf, refuseProtectedListPaths } from '../items/item-scope';
import { accessPlanOf } from '../access/access-plan';
import { refuseProtectedPaths } from '../access/protected-fields';
import { AnalysisRepository } from './analysis.repository';
import { suggestIndex, toExplainResult, type ExplainResult } from './explain';
import { withSearch } from '../search/search-query';

/**
 * Reads about items rather than of items: grouped counts and sums, and what a list query does on
 * the database. A sub caller is confined by its read rule exactly as in lists.
 */
@Injectable()
export class ItemAnalysisService {
  constructor(
    private readonly collections: CollectionsService,
    private readonly items: ItemsRepository,
    private readonly analysis: AnalysisRepository,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}

  async aggregate(
    principal: CustomerPrincipal,
    collection: string,
    query: ItemQuery,
    request: AggregateRequest,
  ): Promise<AggregateResult> {
    const target = await this.collections.find(principal, collection);
    const access = accessPlanOf(principal, target, query.ownerField);
    // A group key or a sum would tell a protected field's values.
    refuseProtectedPaths(access, conditionPaths(query.conditions), 'filter');
    refuseProtectedPaths(access, [request.groupBy], 'groupBy');
    if (request.field !== null) refuseProtectedPaths(access, [request.field], 'field');
    if (!target) return { groups: [], truncated: false };
    const match = readMatchOf(access, query.conditions);
    const max = this.config.limits.aggregateMaxGroups;
    const pipeline = aggregatePipeline(request, itemFilter(target, match), max);
    try {
      return toAggregateResult(await this.analysis.aggregate(target, pipeline), max);
    } catch (error) {
      // FerretDB implements $sum and $count only: avg, min and max are computed from the items.
      if (!isNotImplemented(error) || request.field === null) throw error;
      const docs = this.analysis.scanGroups(target, match, request.groupBy, request.field);
      return toAggregateResult(await groupInProcess(docs, request, max), max);
    }
  }

  async explain(
    principal: CustomerPrincipal,
    collection: string,
    query: ItemListQuery,
  ): Promise<ExplainResult> {
    const target = await this.collections.find(principal, collection);
    // The very query of the list: the caller's read rule ANDed in, the same paths refused.
    const access = accessPlanOf(principal, target, query.ownerField);
    refuseProtectedListPaths(access, query);
    const read = readMatchOf(access, query.conditions);
    if (!target) {
      // Nothing to run: the collection does not exist, so no index serves anything yet.
      const suggestion = suggestIndex(read, query.plan);
      return { indexUsed: null, stage: 'EOF', ...(suggestion ? { suggestion } : {}) };
    }
    // `q` as the list reads it: its words ANDed in (their multikey index serves them).
    const match = withSearch(read, collection, target, query.search, this.config);
    const output = await this.items.explainList(target, match, query.plan, query.projection);
    return toExplainResult(output, match, query.plan);
  }
}
