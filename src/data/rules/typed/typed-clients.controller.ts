import { Controller, Get, Inject } from '@nestjs/common';
import { ApiOkResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import {
  readableCollections,
  Auth,
  CurrentPrincipal,
  type CustomerPrincipal,
  NeedsScope,
} from '../../../auth';
import { APP_CONFIG, type AppConfig } from '../../../config';
import { CollectionsService } from '../../collections/collections.service';
import { typedCollectionOf, typedCollectionsDocument } from './collections-document';

/** An abridged answer: one collection with a schema (`{"title": string, "done": boolean}`). */
const DOCUMENT_EXAMPLE = {
  openapi: '3.1.0',
  info: { title: 'Data collections', version: '3f9c0a1b2c4d' },
  paths: {
    '/data/todos': { get: { operationId: 'todos.list' }, post: { operationId: 'todos.create' } },
    '/data/todos/_id/{id}': {
      get: { operationId: 'todos.get' },
      put: { operationId: 'todos.update' },
      delete: { operationId: 'todos.delete' },
    },
  },
  components: {
    schemas: {
      'todos.Item': {
        type: 'object',
        properties: {
          title: { type: 'string' },
          done: { type: 'boolean' },
          _id: { type: 'string' },
          _createdAt: { type: 'string', format: 'date-time' },
          _updatedAt: { type: 'string', format: 'date-time' },
        },
        required: ['title', '_id', '_createdAt', '_updatedAt'],
      },
    },
  },
};

/**
 * `GET /data/openapi.json`. No collection name holds a dot, so this path names no collection; it
 * is still a `{collection}` shape, so its controller is registered before CollectionItemsController
 * (data.controllers.ts).
 */
@ApiTags('data')
@Controller('data')
export class TypedClientsController {
  private readonly limits: { listDefault: number; listMax: number };

  constructor(
    private readonly collections: CollectionsService,
    @Inject(APP_CONFIG) config: AppConfig,
  ) {
    this.limits = { listDefault: config.limits.listDefault, listMax: config.limits.listMax };
  }

  /**
   * An OpenAPI 3.1 document of the caller's collections in the request branch, for generating
   * typed clients (`npm run client:collections`): every collection with a JSON Schema gets item
   * types made of its schema and the service's fields, and the paths of its list, creates and
   * items by `_id`.
   */
  @Get('openapi.json')
  @NeedsScope('data:read')
  @Auth('root', 'sub', 'team')
  @ApiOperation({
    summary: "An OpenAPI document of the caller's collections, typed by their schemas",
  })
  @ApiOkResponse({
    description:
      'OpenAPI 3.1: per collection `/data/{name}` (GET, POST) and `/data/{name}/_id/{id}` (GET, PUT, DELETE); with a schema, the components `<name>.Item`, `<name>.NewItem`, `<name>.Values`',
    schema: {
      type: 'object',
      required: ['openapi', 'info', 'paths', 'components'],
      additionalProperties: true,
    },
    example: DOCUMENT_EXAMPLE,
  })
  async getCollectionsDocument(
    @CurrentPrincipal() principal: CustomerPrincipal,
  ): Promise<Record<string, unknown>> {
    const entries = readableCollections(principal, await this.collections.registered(principal));
    return typedCollectionsDocument(entries.map(typedCollectionOf), {
      branch: principal.branch,
      limits: this.limits,
    });
  }
}
