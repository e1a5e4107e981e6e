// Compile-time checks of the generated types: `tsc -b client` fails when the OpenAPI document
// stops giving clients what they need. Each Assert only compiles when its condition is `true`.
import type { operations, Schemas } from '../src';

type Assert<T extends true> = T;
/** True when T is not `unknown` (a parameter the document left untyped). */
type Typed<T> = unknown extends T ? false : true;
type Query<K extends keyof operations> = NonNullable<operations[K]['parameters']['query']>;
type JsonBody<K extends keyof operations> = operations[K] extends {
  requestBody?: { content: { 'application/json': infer B } };
}
  ? B
  : never;

/** Data items are open: any member besides `_id`, `_createdAt`, `_updatedAt` can be read. */
export type ItemMembersReadable = [
  Assert<Typed<Schemas['DataItemDto']['_id']>>,
  Assert<'text' extends keyof Schemas['DataItemDto'] ? true : false>,
];

/** Members with a server default stay optional in request bodies. */
export type DefaultsOptional = [
  Assert<{ item: { text: string } } extends JsonBody<'createDataItem'> ? true : false>,
  Assert<{ field: string } extends JsonBody<'createDataIndex'> ? true : false>,
  Assert<{ values: { done: boolean } } extends JsonBody<'updateDataItem'> ? true : false>,
];

/** An index needs `field` or `fields`: an empty body does not type-check. */
export type IndexNeedsAField = Assert<
  Record<string, never> extends JsonBody<'createDataIndex'> ? false : true
>;

/** The free-form query parameters are strings, not `unknown`. */
export type QueryParametersTyped = [
  Assert<Typed<Query<'listProjects'>['name']>>,
  Assert<Typed<Query<'listProjects'>['tag']>>,
  Assert<Typed<Query<'listProjects'>['filter[name]']>>,
  Assert<Typed<Query<'listProjects'>['filter[tag]']>>,
  Assert<Typed<Query<'listDataItems'>['authField']>>,
  Assert<Query<'listProjects'>['name'] extends string | undefined ? true : false>,
];
