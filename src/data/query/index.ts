// What other modules may use of the data request rules: the owner field of a request, and its
// pattern in their own OpenAPI schemas (a profile's erasure purges items by owner field).
export { OWNER_FIELD_SCHEMA_PATTERN } from './json-guard';
export { ownerFieldOf } from './data-requests';
