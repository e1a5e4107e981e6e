import type { OpenAPIObject } from '@nestjs/swagger';
import type { Schema } from './openapi-shared';

/**
 * Named schemas that modules add to `components.schemas`: recursive ones (a JSON value that may
 * hold objects of such values), which no DTO class can describe, and ones a module refers to by
 * name without importing the module that defines them.
 */
const shared = new Map<string, Schema>();

/**
 * A list's item filter (`filter[k]=v`, `filter[k][op]=v`) and projection (`fields`), defined by
 * the data module and taken as they are by the change feed's live queries.
 */
export const ITEM_FILTER_SCHEMA = 'ItemFilter';
export const ITEM_FIELDS_SCHEMA = 'ItemFields';

/** The `$ref` of the shared schema `name`. */
export function sharedSchemaRef(name: string): { $ref: string } {
  return { $ref: `#/components/schemas/${name}` };
}

/** Registers `schema` as `name` (it may refer to itself with sharedSchemaRef) and returns its `$ref`. */
export function sharedSchema(name: string, schema: Schema): { $ref: string } {
  shared.set(name, schema);
  return sharedSchemaRef(name);
}

export function addSharedSchemas(document: OpenAPIObject): void {
  document.components ??= {};
  const schemas = (document.components.schemas ??= {});
  for (const [name, schema] of shared) schemas[name] ??= structuredClone(schema);
}
