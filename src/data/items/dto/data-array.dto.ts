import { ApiPropertyOptional } from '@nestjs/swagger';
import type { Schema } from '../../../common/http/openapi-shared';
import { IsString, MaxLength } from 'class-validator';
import { OptionalField } from '../../../common/dto';
import { FreeFormMember } from '../../../common/http/validation';
import { sharedSchema, sharedSchemaRef } from '../../../common/http/openapi-schemas';
import { MANAGED_FIELDS } from '../../query/data.constants';
import {
  DATA_VALUE,
  MAX_FIELD_NAME_LENGTH,
  ORDER_PATH_SCHEMA_PATTERN,
  OWNER_FIELD_SCHEMA_PATTERN,
} from '../../query/json-guard';

/** A field path that is not one of the server's fields. */
const ARRAY_FIELD: Schema = {
  type: 'string',
  pattern: `^(?!(?:${[...MANAGED_FIELDS].join('|')})(?:\\.|$))${ORDER_PATH_SCHEMA_PATTERN.slice(1)}`,
  maxLength: MAX_FIELD_NAME_LENGTH,
  description: 'The array field (dotted path); not _id, _createdAt or _updatedAt',
  example: 'lines',
};

const ELEMENT_MATCH: Schema = {
  type: 'object',
  description: 'Fields an element must equal (an element is a JSON object)',
  additionalProperties: {
    anyOf: [{ type: 'string' }, { type: 'number' }, { type: 'boolean' }],
    nullable: true,
  },
  minProperties: 1,
  example: { sku: 'A-1' },
};

const AUTH_FIELD: Schema = {
  type: 'string',
  pattern: OWNER_FIELD_SCHEMA_PATTERN,
  maxLength: MAX_FIELD_NAME_LENGTH,
};

const PUSH: Schema = {
  type: 'object',
  description: 'Appends `value` to the array (an absent field becomes a one-element array)',
  required: ['field', 'value'],
  properties: { field: ARRAY_FIELD, value: sharedSchemaRef('DataElement') },
  additionalProperties: false,
};

const UPDATE_ELEMENT: Schema = {
  type: 'object',
  description: 'Sets `values` on the first element that `match` selects',
  required: ['field', 'match', 'values'],
  properties: {
    field: ARRAY_FIELD,
    match: ELEMENT_MATCH,
    values: { type: 'object', additionalProperties: DATA_VALUE, minProperties: 1 },
  },
  additionalProperties: false,
};

const REMOVE_ELEMENT: Schema = {
  description: 'Removes the element at `position` (from 0), or every element `match` selects',
  oneOf: [
    {
      type: 'object',
      required: ['field', 'position'],
      properties: { field: ARRAY_FIELD, position: { type: 'integer', minimum: 0 } },
      additionalProperties: false,
    },
    {
      type: 'object',
      required: ['field', 'match'],
      properties: { field: ARRAY_FIELD, match: ELEMENT_MATCH },
      additionalProperties: false,
    },
  ],
};

/** The body of PATCH /data/{c}/{indexName}/{indexValue}: exactly one operation. */
export const ARRAY_OPERATION_BODY = sharedSchema('DataArrayOperation', {
  type: 'object',
  description: 'Exactly one of push, updateElement, removeElement; optionally authField',
  properties: {
    push: PUSH,
    updateElement: UPDATE_ELEMENT,
    removeElement: REMOVE_ELEMENT,
    authField: AUTH_FIELD,
  },
  additionalProperties: false,
  oneOf: [{ required: ['push'] }, { required: ['updateElement'] }, { required: ['removeElement'] }],
});

/** Validated by array-operations.ts (one operation, its members); declared here for the pipe. */
export class ArrayOperationDto {
  @OptionalField()
  @FreeFormMember()
  @ApiPropertyOptional()
  push?: unknown;

  @OptionalField()
  @FreeFormMember()
  @ApiPropertyOptional()
  updateElement?: unknown;

  @OptionalField()
  @FreeFormMember()
  @ApiPropertyOptional()
  removeElement?: unknown;

  /** The owner field (default `userId`). */
  @OptionalField()
  @IsString()
  @MaxLength(256)
  @ApiPropertyOptional()
  authField?: string;
}
