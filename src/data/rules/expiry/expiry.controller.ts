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
  ApiNoContentResponse,
  ApiNotFoundResponse,
  ApiOkResponse,
  ApiTags,
} from '@nestjs/swagger';
import { Auth, CurrentPrincipal, type CustomerPrincipal, NeedsScope } from '../../../auth';
import { ProblemDto } from '../../../common/errors';
import { CollectionNamePipe } from '../../collections/collection-name.pipe';
import { CollectionGrant } from '../../collections/collection-grant';
import { CollectionParam } from '../../data.openapi';
import { ExpiryDto, PutExpiryDto, toExpiryDto } from './dto/expiry.dto';
import { ExpiryService } from './expiry.service';

const RULE_EXAMPLE = {
  field: 'expiresAt',
  afterSeconds: 3600,
  changedAt: '2026-11-26T09:00:00.000Z',
};

/** A read or removal of the rule: a bad collection name, or no rule. */
const RULE_ANSWERS = applyDecorators(
  ApiBadRequestResponse({ type: ProblemDto, description: 'Bad collection name' }),
  ApiNotFoundResponse({
    type: ProblemDto,
    description: 'EXPIRY_NOT_FOUND (no rule, or no such collection)',
  }),
);

/** When a collection's items expire (docs/data.md, "Expiry"); root and team keys only. */
@ApiTags('data')
@CollectionGrant()
@Controller('data')
@Auth('root', 'team')
export class ExpiryController {
  constructor(private readonly expiry: ExpiryService) {}

  /** The collection's expiry rule. */
  @Get(':collection/expiry')
  @NeedsScope('data:read')
  @CollectionParam()
  @ApiOkResponse({ type: ExpiryDto, example: RULE_EXAMPLE })
  @RULE_ANSWERS
  async getDataExpiry(
    @CurrentPrincipal() principal: CustomerPrincipal,
    @Param('collection', CollectionNamePipe) collection: string,
  ): Promise<ExpiryDto> {
    return toExpiryDto(await this.expiry.get(principal, collection));
  }

  /**
   * Sets the expiry rule (creating the collection if needed): from the moment an item's time
   * plus `afterSeconds` has passed, no request sees it, and the sweep deletes it within
   * EXPIRY_SWEEP_MS with a `deleted` event by `{"kind":"system","id":"expiry"}`.
   */
  @Put(':collection/expiry')
  @NeedsScope('data:write')
  @HttpCode(HttpStatus.OK)
  @CollectionParam()
  @ApiBody({
    type: PutExpiryDto,
    examples: {
      createdAt: { value: { field: '_createdAt', afterSeconds: 86400 } },
      ownTime: { value: { field: 'expiresAt', afterSeconds: 1 } },
    },
  })
  @ApiOkResponse({ type: ExpiryDto, example: RULE_EXAMPLE })
  @ApiBadRequestResponse({
    type: ProblemDto,
    description: 'VALIDATION_FAILED (field, afterSeconds, unknown members), bad collection name',
  })
  @ApiConflictResponse({
    type: ProblemDto,
    description: 'COLLECTION_QUOTA_EXCEEDED; PLAN_LIMIT_EXCEEDED under a plan',
  })
  @ApiNotFoundResponse({
    type: ProblemDto,
    description: 'COLLECTION_NOT_FOUND (dropped meanwhile)',
  })
  async putDataExpiry(
    @CurrentPrincipal() principal: CustomerPrincipal,
    @Param('collection', CollectionNamePipe) collection: string,
    @Body() body: PutExpiryDto,
  ): Promise<ExpiryDto> {
    const rule = await this.expiry.set(principal, collection, {
      field: body.field,
      afterSeconds: body.afterSeconds,
    });
    return toExpiryDto(rule);
  }

  /** Removes the expiry rule: items no longer expire (those deleted stay deleted). */
  @Delete(':collection/expiry')
  @NeedsScope('data:write')
  @HttpCode(HttpStatus.NO_CONTENT)
  @CollectionParam()
  @ApiNoContentResponse({ description: 'Removed' })
  @RULE_ANSWERS
  async deleteDataExpiry(
    @CurrentPrincipal() principal: CustomerPrincipal,
    @Param('collection', CollectionNamePipe) collection: string,
  ): Promise<void> {
    await this.expiry.remove(principal, collection);
  }
}
