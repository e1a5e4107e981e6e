import {
  applyDecorators,
  Body,
  Controller,
  Delete,
  Get,
  HttpCode,
  HttpStatus,
  Param,
  Put,
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
import { Auth, CurrentPrincipal, type CustomerPrincipal, NeedsScope } from '../../auth';
import { ProblemDto } from '../../common/errors';
import { IfMatchHeader } from '../../common/http/conditional';
import type { IfMatch } from '../../common/http/etag';
import { ApiConditional } from '../../common/http/openapi-conditional';
import { Reply } from '../../common/http/reply';
import { CollectionGrant } from '../collections/collection-grant';
import { CollectionNamePipe } from '../collections/collection-name.pipe';
import { CollectionParam } from '../data.openapi';
import { AccessRulesService } from './access.service';
import {
  AccessRulesDto,
  HIDDEN_FIELDS_EXAMPLE,
  PUBLIC_CATALOGUE_EXAMPLE,
  PutAccessRulesDto,
  SHARED_READ_EXAMPLE,
  toAccessRulesDto,
} from './dto/access-rules.dto';

const ANSWER_EXAMPLE = {
  ...PUBLIC_CATALOGUE_EXAMPLE,
  protectedFields: { sub: [], public: PUBLIC_CATALOGUE_EXAMPLE.protectedFields.public },
  changedAt: '2026-11-29T10:00:00.000Z',
};

const SUB_KEYS_REFUSED = ApiForbiddenResponse({
  type: ProblemDto,
  description: 'FORBIDDEN: sub and publishable keys; a key without the scope or the collection',
});

const NOT_FOUND = ApiNotFoundResponse({
  type: ProblemDto,
  description: 'COLLECTION_NOT_FOUND (no such collection, or dropped meanwhile)',
});

const BAD_NAME = ApiBadRequestResponse({ type: ProblemDto, description: 'Bad collection name' });

/** A change: If-Match (412 with the current ETag), `updated` event of the collection. */
const CHANGE_ANSWERS = applyDecorators(ApiConditional('write'), SUB_KEYS_REFUSED, NOT_FOUND);

/**
 * Who of the sub keys and publishable keys may read and write a collection's items, and which
 * fields they never see (docs/data.md, "Access rules"); root and team keys only, and never
 * limited by the rules themselves. A change is in force on this instance at once and on every
 * other one within REGISTRY_CACHE_MS.
 */
@ApiTags('data')
@CollectionGrant()
@Controller('data')
@Auth('root', 'team')
export class AccessRulesController {
  constructor(private readonly access: AccessRulesService) {}

  /**
   * The collection's access rules, every member written out (a collection created since
   * collections have rules has the defaults written out: sub `own`, public `none`). The ETag
   * names the rules (If-None-Match → 304; If-Match on PUT and DELETE).
   */
  @Get(':collection/access')
  @NeedsScope('data:read')
  @CollectionParam()
  @ApiConditional('read')
  @ApiOkResponse({ type: AccessRulesDto, example: ANSWER_EXAMPLE })
  @BAD_NAME
  @SUB_KEYS_REFUSED
  @NOT_FOUND
  async getDataAccess(
    @CurrentPrincipal() principal: CustomerPrincipal,
    @Param('collection', CollectionNamePipe) collection: string,
  ): Promise<Reply<AccessRulesDto>> {
    const view = await this.access.get(principal, collection);
    return Reply.read(view.etag, () => toAccessRulesDto(view));
  }

  /**
   * Sets the access rules (creating the collection within the quota when there is none and no
   * If-Match is sent); members left out take the defaults. Stored items are not touched.
   * `If-Match: *` holds when the collection has rules written (every collection created since
   * collections have rules). One `updated` event of the collection.
   */
  @Put(':collection/access')
  @NeedsScope('data:write')
  @HttpCode(HttpStatus.OK)
  @CollectionParam()
  @ApiBody({
    type: PutAccessRulesDto,
    examples: {
      sharedRead: {
        summary: 'Every sub key reads every item; each writes only its own',
        value: SHARED_READ_EXAMPLE,
      },
      publicCatalogue: {
        summary: 'A publishable key reads the published items, without their cost',
        value: PUBLIC_CATALOGUE_EXAMPLE,
      },
      hiddenCostFields: {
        summary: "Sub keys read their client's items and never see cost fields",
        value: HIDDEN_FIELDS_EXAMPLE,
      },
    },
  })
  @ApiOkResponse({ type: AccessRulesDto, example: ANSWER_EXAMPLE })
  @ApiBadRequestResponse({
    type: ProblemDto,
    description:
      'VALIDATION_FAILED (each wrong member named: a rule, a filter beyond FILTER_MAX_CONDITIONS or FILTER_MAX_IN_VALUES, an unknown caller constant, a protected field path, more than ACCESS_MAX_PROTECTED_FIELDS), bad collection name',
  })
  @ApiConflictResponse({
    type: ProblemDto,
    description: 'COLLECTION_QUOTA_EXCEEDED; PLAN_LIMIT_EXCEEDED under a plan',
  })
  @CHANGE_ANSWERS
  async putDataAccess(
    @CurrentPrincipal() principal: CustomerPrincipal,
    @Param('collection', CollectionNamePipe) collection: string,
    @Body() body: PutAccessRulesDto,
    @IfMatchHeader() ifMatch: IfMatch,
  ): Promise<Reply<AccessRulesDto>> {
    // The members as sent, as a plain object (readAccessRules checks them all).
    const rules = Object.fromEntries(Object.entries(body).filter(([, v]) => v !== undefined));
    const view = await this.access.put(principal, collection, rules, ifMatch);
    return Reply.written(view.etag, toAccessRulesDto(view));
  }

  /** Sets the rules back to the defaults (sub `own`, public `none`, nothing protected). */
  @Delete(':collection/access')
  @NeedsScope('data:write')
  @HttpCode(HttpStatus.NO_CONTENT)
  @CollectionParam()
  @ApiNoContentResponse({ description: 'The defaults hold' })
  @BAD_NAME
  @CHANGE_ANSWERS
  async deleteDataAccess(
    @CurrentPrincipal() principal: CustomerPrincipal,
    @Param('collection', CollectionNamePipe) collection: string,
    @IfMatchHeader() ifMatch: IfMatch,
  ): Promise<void> {
    await this.access.reset(principal, collection, ifMatch);
  }
}
