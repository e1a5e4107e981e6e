import { Body, Controller, Delete, Get, HttpCode, HttpStatus, Param, Put } from '@nestjs/common';
import {
  ApiAcceptedResponse,
  ApiBadRequestResponse,
  ApiConflictResponse,
  ApiForbiddenResponse,
  ApiNoContentResponse,
  ApiNotFoundResponse,
  ApiOkResponse,
  ApiTags,
} from '@nestjs/swagger';
import { Auth, CurrentPrincipal, type CustomerPrincipal, NeedsScope } from '../../auth';
import { ProblemDto } from '../../common/errors';
import { IfMatchHeader } from '../../common/http/conditional';
import type { IfMatch } from '../../common/http/etag';
import { ApiConditional } from '../../common/http/openapi-conditional';
import { Reply } from '../../common/http/reply';
import { CollectionGrant } from '../collections/collection-grant';
import { CollectionNamePipe } from '../collections/collection-name.pipe';
import { CollectionParam } from '../data.openapi';
import { PutSearchDto, SearchDto, SearchStartedDto, toSearchDto } from './dto/search.dto';
import { SearchService } from './search.service';

const SUB_KEYS_REFUSED = ApiForbiddenResponse({
  type: ProblemDto,
  description: 'FORBIDDEN: sub and publishable keys; a key without the scope or the collection',
});

const BAD_NAME = ApiBadRequestResponse({ type: ProblemDto, description: 'Bad collection name' });

/**
 * A collection's full-text search configuration (docs/data.md, "Search"): which fields' words
 * `q` finds items by. Root and team keys only. The configuration takes one of the collection's
 * index slots (the `search_words` index); its words are built in the background.
 */
@ApiTags('data')
@CollectionGrant()
@Controller('data')
@Auth('root', 'team')
export class SearchController {
  constructor(private readonly search: SearchService) {}

  /**
   * The configuration, its state and the build's progress (`indexed` of `total` items). The ETag
   * names the configuration (its version), which If-Match on PUT and DELETE takes; it does not
   * change with the progress, so this read is not conditional.
   */
  @Get(':collection/search')
  @NeedsScope('data:read')
  @CollectionParam()
  @ApiOkResponse({
    type: SearchDto,
    headers: {
      ETag: {
        description:
          'The configuration\'s tag, `"search-<version>"`, for If-Match on PUT and DELETE (it does not change with the progress)',
        schema: { type: 'string' },
        required: true,
      },
    },
  })
  @BAD_NAME
  @SUB_KEYS_REFUSED
  @ApiNotFoundResponse({
    type: ProblemDto,
    description: 'SEARCH_NOT_FOUND (no configuration), COLLECTION_NOT_FOUND',
  })
  async getDataSearch(
    @CurrentPrincipal() principal: CustomerPrincipal,
    @Param('collection', CollectionNamePipe) collection: string,
  ): Promise<Reply<SearchDto>> {
    const view = await this.search.get(principal, collection);
    return Reply.written(view.etag, toSearchDto(view));
  }

  /**
   * Sets the configuration (creating the collection within the quota when there is none and no
   * If-Match is sent): stores the next `version` in state `building`, creates the `search_words`
   * index (one of the collection's MAX_INDEXES slots, kept by a later PUT) and starts the build
   * of the word lists of the items stored before, once every instance writes words
   * (REGISTRY_CACHE_MS and a margin later). A build under way for an older version stops. GET
   * shows the progress; `q` answers 409 SEARCH_BUILDING until it is `ready`.
   */
  @Put(':collection/search')
  @NeedsScope('data:write')
  @HttpCode(HttpStatus.ACCEPTED)
  @CollectionParam()
  @ApiAcceptedResponse({ type: SearchStartedDto, description: 'The build started' })
  @ApiBadRequestResponse({
    type: ProblemDto,
    description:
      'VALIDATION_FAILED (each wrong member named: fields, minTokenLength, an unknown member), PROTECTED_FIELD (a search field protected by the access rules), bad collection name',
  })
  @ApiConflictResponse({
    type: ProblemDto,
    description:
      'INDEX_QUOTA_EXCEEDED (no index slot free), COLLECTION_QUOTA_EXCEEDED; PLAN_LIMIT_EXCEEDED for either under a plan (members `limit`, `max`, `usage`, `plan`)',
  })
  @ApiConditional('write')
  @SUB_KEYS_REFUSED
  @ApiNotFoundResponse({
    type: ProblemDto,
    description: 'COLLECTION_NOT_FOUND (dropped meanwhile)',
  })
  async putDataSearch(
    @CurrentPrincipal() principal: CustomerPrincipal,
    @Param('collection', CollectionNamePipe) collection: string,
    @Body() body: PutSearchDto,
    @IfMatchHeader() ifMatch: IfMatch,
  ): Promise<Reply<SearchStartedDto>> {
    const members = Object.fromEntries(Object.entries(body).filter(([, v]) => v !== undefined));
    const view = await this.search.put(principal, collection, members, ifMatch);
    return Reply.written(view.etag, { state: 'building', version: view.version });
  }

  /**
   * Removes the configuration: `q` answers 400 SEARCH_NOT_CONFIGURED at once, the index is
   * dropped and its slot free; the items' word lists are removed in the background.
   */
  @Delete(':collection/search')
  @NeedsScope('data:write')
  @HttpCode(HttpStatus.NO_CONTENT)
  @CollectionParam()
  @ApiNoContentResponse({ description: 'The configuration is gone' })
  @BAD_NAME
  @ApiConditional('write')
  @SUB_KEYS_REFUSED
  @ApiNotFoundResponse({
    type: ProblemDto,
    description: 'SEARCH_NOT_FOUND (no configuration), COLLECTION_NOT_FOUND',
  })
  async deleteDataSearch(
    @CurrentPrincipal() principal: CustomerPrincipal,
    @Param('collection', CollectionNamePipe) collection: string,
    @IfMatchHeader() ifMatch: IfMatch,
  ): Promise<void> {
    await this.search.remove(principal, collection, ifMatch);
  }
}
