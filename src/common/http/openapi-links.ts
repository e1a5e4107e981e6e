import type { OpenAPIObject } from '@nestjs/swagger';
import { BRANCH_HEADER, operations, type Operation } from './openapi-shared';

/**
 * OpenAPI links from the operations that create a resource to those that address it: the id or
 * name a create returns is the parameter the read, update and delete take. Clients and tools
 * (generated SDKs, stateful fuzzers) follow them to chain calls without guessing.
 */

interface LinkSpec {
  operationId: string;
  parameters?: Record<string, string>;
  requestBody?: unknown;
  description?: string;
}

/** A created resource lives in the branch of the request that created it. */
const SAME_BRANCH = { [`header.${BRANCH_HEADER}`]: `$request.header.${BRANCH_HEADER}` };

const PROJECT = { projectId: '$response.body#/id', ...SAME_BRANCH };
const ITEM = {
  collection: '$request.path.collection',
  indexName: '_id',
  indexValue: '$response.body#/_id',
  ...SAME_BRANCH,
};
const COLLECTION = { collection: '$request.path.collection', ...SAME_BRANCH };
const SUB_PROFILE_QUERY = {
  'query.clientId': '$response.body#/clientId',
  'query.accountId': '$response.body#/accountId',
  ...SAME_BRANCH,
};

/** Source operationId → its 200 response's links. */
const LINKS: Record<string, Record<string, LinkSpec>> = {
  createProject: {
    GetProject: { operationId: 'getProjectById', parameters: PROJECT },
    UpdateProject: { operationId: 'updateProject', parameters: PROJECT },
    DeleteProject: { operationId: 'deleteProject', parameters: PROJECT },
  },
  createDataItem: {
    GetItem: { operationId: 'getDataItem', parameters: ITEM },
    UpdateItem: { operationId: 'updateDataItem', parameters: ITEM },
    DeleteItem: { operationId: 'deleteDataItem', parameters: ITEM },
    ListItems: { operationId: 'listDataItems', parameters: COLLECTION },
    CountItems: { operationId: 'countDataItems', parameters: COLLECTION },
  },
  createDataIndex: {
    ListIndexes: { operationId: 'listDataIndexes', parameters: COLLECTION },
    DeleteIndex: {
      operationId: 'deleteDataIndex',
      parameters: COLLECTION,
      requestBody: { name: '$response.body#/name' },
    },
  },
  createSubProfile: {
    GetSubProfile: {
      operationId: 'getSubProfile',
      parameters: {
        'path.accountId': '$response.body#/accountId',
        'query.clientId': '$response.body#/clientId',
        ...SAME_BRANCH,
      },
    },
    UpdateSubProfile: { operationId: 'updateProfile', parameters: SUB_PROFILE_QUERY },
    AddSubProfileGroup: { operationId: 'addProfileGroup', parameters: SUB_PROFILE_QUERY },
    RemoveSubProfileGroup: { operationId: 'removeProfileGroup', parameters: SUB_PROFILE_QUERY },
  },
  createApiKey: {
    RevokeKey: {
      operationId: 'deleteApiKey',
      parameters: { id: '$response.body#/key/id', ...SAME_BRANCH },
    },
  },
  createUser: {
    SetPlans: {
      operationId: 'setUserPlans',
      parameters: { subject: '$response.body#/profile/subject' },
    },
  },
};

/** Adds the links whose source and target operations both are in the document. */
export function addLinks(document: OpenAPIObject): void {
  const byId = new Map<string, Operation>();
  for (const [, , operation] of operations(document)) {
    if (operation.operationId) byId.set(operation.operationId, operation);
  }
  for (const [source, links] of Object.entries(LINKS)) {
    const response = byId.get(source)?.responses['200'] as { links?: object } | undefined;
    if (!response) continue;
    const present = Object.entries(links).filter(([, link]) => byId.has(link.operationId));
    if (present.length === 0) continue;
    response.links = { ...response.links, ...Object.fromEntries(present) };
  }
}
