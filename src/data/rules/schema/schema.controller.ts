import {
  Body,
  Controller,
  Delete,
  Get,
  HttpCode,
  HttpStatus,
  Param,
  Put,
  Query,
} from '@nestjs/common';
import {
  ApiBadRequestResponse,
  ApiBody,
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
import { ownerFieldOf } from '../../query/data-requests';
import { CollectionSchemas } from './collection-schemas.service';
import {
  CollectionSchemaDto,
  PutCollectionSchemaDto,
  SchemaViolationsDto,
  SchemaViolationsQueryDto,
} from './dto/collection-schema.dto';

const EXAMPLE = {
  schema: {
    type: 'object',
    properties: { title: { type: 'string', minLength: 1 }, status: { enum: ['open', 'done'] } },
    required: ['title', 'status'],
  },
  action: 'error',
  changedAt: '2026-11-26T10:00:00.000Z',
};

/** A collection's JSON Schema (root and team keys); every write path of its items checks it. */
@ApiTags('data')
@CollectionGrant()
@Controller('data')
@Auth('root', 'team')
export class SchemaController {
  constructor(private readonly schemas: CollectionSchemas) {}

  /**
   * Sets the collection's schema (creating the collection within the quota when there is none).
   * Stored items are not rewritten (GET …/schema-violations lists those that break it); the change
   * is an `updated` event of the collection and holds on every instance within REGISTRY_CACHE_MS.
   *
   * What a schema may cost is bounded, so that no schema can stall an instance: its schema nodes
   * with every `$ref` expanded where it stands (SCHEMA_MAX_EXPANDED_NODES; a schema that refers
   * to itself without going down into the item is refused), each pattern's RE2 program
   * (SCHEMA_PATTERN_MAX_PROGRAM instructions) and the time to compile it (half of
   * SCHEMA_COMPILE_MAX_MS). Beyond a bound: 400 SCHEMA_TOO_COMPLEX, its detail naming the bound.
   * Checking the items of one write later runs within SCHEMA_CHECK_MAX_MS.
   */
  @Put(':collection/schema')
  @NeedsScope('data:write')
  @CollectionParam()
  @ApiBadRequestResponse({
    type: ProblemDto,
    description:
      'VALIDATION_FAILED: the schema is not one this service runs (the field names where); SCHEMA_TOO_COMPLEX: it is beyond SCHEMA_MAX_EXPANDED_NODES, SCHEMA_PATTERN_MAX_PROGRAM or SCHEMA_COMPILE_MAX_MS (the detail names which)',
  })
  @ApiBody({
    type: PutCollectionSchemaDto,
    examples: { schema: { value: { schema: EXAMPLE.schema, action: 'error' } } },
  })
  @ApiOkResponse({ type: CollectionSchemaDto, example: EXAMPLE })
  async putDataSchema(
    @CurrentPrincipal() principal: CustomerPrincipal,
    @Param('collection', CollectionNamePipe) collection: string,
    @Body() body: PutCollectionSchemaDto,
  ): Promise<CollectionSchemaDto> {
    return this.schemas.put(principal, collection, body.schema, body.action ?? 'error');
  }

  @Get(':collection/schema')
  @NeedsScope('data:read')
  @CollectionParam()
  @ApiOkResponse({ type: CollectionSchemaDto, example: EXAMPLE })
  @ApiNotFoundResponse({ type: ProblemDto, description: 'COLLECTION_NOT_FOUND, SCHEMA_NOT_FOUND' })
  async getDataSchema(
    @CurrentPrincipal() principal: CustomerPrincipal,
    @Param('collection', CollectionNamePipe) collection: string,
  ): Promise<CollectionSchemaDto> {
    return this.schemas.get(principal, collection);
  }

  /** Removes the schema: writes are no longer checked. */
  @Delete(':collection/schema')
  @NeedsScope('data:write')
  @HttpCode(HttpStatus.NO_CONTENT)
  @CollectionParam()
  @ApiNoContentResponse({ description: 'Removed' })
  @ApiNotFoundResponse({ type: ProblemDto, description: 'COLLECTION_NOT_FOUND, SCHEMA_NOT_FOUND' })
  async deleteDataSchema(
    @CurrentPrincipal() principal: CustomerPrincipal,
    @Param('collection', CollectionNamePipe) collection: string,
  ): Promise<void> {
    await this.schemas.remove(principal, collection);
  }

  /**
   * The stored items that break the schema, one page at a time in `_id` order (at most `limit`
   * items read per request, so the work is bounded however large the collection is). Follow
   * `next` with `after` to check the rest.
   */
  @Get(':collection/schema-violations')
  @NeedsScope('data:read')
  @CollectionParam()
  @ApiOkResponse({
    type: SchemaViolationsDto,
    example: {
      checked: 100,
      violating: 1,
      sample: [
        {
          _id: '665f1b2c9d3e4a0012345678',
          errors: [
            {
              pointer: '/status',
              keyword: 'enum',
              message: 'must be equal to one of the allowed values',
            },
          ],
        },
      ],
      next: '665f1b2c9d3e4a00123456dc',
    },
  })
  @ApiNotFoundResponse({ type: ProblemDto, description: 'COLLECTION_NOT_FOUND, SCHEMA_NOT_FOUND' })
  async listDataSchemaViolations(
    @CurrentPrincipal() principal: CustomerPrincipal,
    @Param('collection', CollectionNamePipe) collection: string,
    @Query() query: SchemaViolationsQueryDto,
  ): Promise<SchemaViolationsDto> {
    return this.schemas.violations(principal, collection, {
      limit: Number(query.limit ?? '100'),
      after: query.after ?? null,
      ownerField: ownerFieldOf(query.authField),
    });
  }
}
