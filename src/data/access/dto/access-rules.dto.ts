import { ApiProperty, ApiPropertyOptional, type ApiPropertyOptions } from '@nestjs/swagger';
import type { SchemaObject } from '@nestjs/swagger/dist/interfaces/open-api-spec.interface';
import { OptionalField } from '../../../common/dto';
import { FreeFormMember, JsonObjectBody } from '../../../common/http/validation';
import { BODY_FILTER_CONDITION } from '../../items/dto/data-item.dto';
import { CLIENT_PATH_SCHEMA_PATTERN, MAX_FIELD_NAME_LENGTH } from '../../query/json-guard';
import { CALLER_CONSTANTS, type AccessRulesDocument } from '../access-rules';
import type { AccessRulesView } from '../access.service';

const FILTER_RULE: SchemaObject = {
  type: 'object',
  required: ['filter'],
  additionalProperties: false,
  properties: {
    filter: {
      type: 'object',
      additionalProperties: BODY_FILTER_CONDITION,
      minProperties: 1,
      description: `A body filter (as PUT /data/{c} with a filter takes it; at most FILTER_MAX_CONDITIONS conditions and FILTER_MAX_IN_VALUES values per list); a string value may be one of the caller's constants: ${CALLER_CONSTANTS.join(', ')}`,
    },
  },
};

/** One operation's rule: `own`, `all`, `none`, or `{filter}` (a body filter). */
const RULE: SchemaObject = {
  oneOf: [
    {
      type: 'string',
      enum: ['own', 'all', 'none'],
      description:
        "`own`: items whose owner field (`authField`, default `userId`) is the caller's account; `all`: every item; `none`: no item",
    },
    FILTER_RULE,
  ],
};

/** A publishable key's read rule: as a sub's, but never `own` (it has no account). */
const PUBLIC_RULE: SchemaObject = {
  oneOf: [
    {
      type: 'string',
      enum: ['all', 'none'],
      description: '`all`: every item; `none`: no item',
    },
    FILTER_RULE,
  ],
};

const SUB_RULES: SchemaObject = {
  type: 'object',
  additionalProperties: false,
  description: 'What a sub key may read, create, update and delete; a member left out is `own`',
  properties: { read: RULE, create: RULE, update: RULE, delete: RULE },
};

const PUBLIC_RULES: SchemaObject = {
  type: 'object',
  additionalProperties: false,
  description:
    'What a publishable key may read; left out: `none`. Not `own` (a publishable key has no account); a caller constant matches nothing. A publishable key never writes.',
  properties: { read: PUBLIC_RULE },
};

const FIELD_LIST: SchemaObject = {
  type: 'array',
  items: { type: 'string', pattern: CLIENT_PATH_SCHEMA_PATTERN, maxLength: MAX_FIELD_NAME_LENGTH },
};

const PROTECTED_FIELDS: SchemaObject = {
  type: 'object',
  additionalProperties: false,
  description: `Field paths (dotted, not _id nor a timestamp) that sub keys and publishable keys never see and may not name in filters, sorts, projections, cursors, aggregates or live filters (400 PROTECTED_FIELD) nor write (403 ACCESS_RULE); at most ACCESS_MAX_PROTECTED_FIELDS (default 64) per class`,
  properties: { sub: FIELD_LIST, public: FIELD_LIST },
};

/** A member's schema as the decorators take it (a `oneOf` of rules is no class). */
const property = (schema: SchemaObject, required?: string[]): ApiPropertyOptions =>
  (required ? { ...schema, required } : schema) as ApiPropertyOptions;

/** Shared read: every sub key reads every item, each writes only its own. */
export const SHARED_READ_EXAMPLE = { sub: { read: 'all' } };

/** A public catalogue: publishable keys read the published items, without the cost field. */
export const PUBLIC_CATALOGUE_EXAMPLE = {
  sub: { read: 'all', create: 'none', update: 'none', delete: 'none' },
  public: { read: { filter: { published: true } } },
  protectedFields: { public: ['cost', 'supplier.note'] },
};

/** Hidden cost fields: sub keys read their team's items and never see what they cost. */
export const HIDDEN_FIELDS_EXAMPLE = {
  sub: {
    read: { filter: { clientId: '$caller.clientId' } },
    update: { filter: { userId: '$caller.accountId', locked: { ne: true } } },
  },
  protectedFields: { sub: ['cost', 'internalNote'] },
};

/**
 * `PUT /data/{c}/access`: the collection's access rules (docs/data.md, "Access rules"). Members
 * left out take the defaults: sub `own` for every operation, public `none`, nothing protected.
 * Checked in full by readAccessRules (400 VALIDATION_FAILED naming every wrong member).
 */
@JsonObjectBody()
export class PutAccessRulesDto {
  @OptionalField()
  @FreeFormMember()
  @ApiPropertyOptional(property(SUB_RULES))
  sub?: unknown;

  @OptionalField()
  @FreeFormMember()
  @ApiPropertyOptional(property(PUBLIC_RULES))
  public?: unknown;

  @OptionalField()
  @FreeFormMember()
  @ApiPropertyOptional(property(PROTECTED_FIELDS))
  protectedFields?: unknown;
}

/** A collection's access rules, every member written out (as a manifest lists them too). */
export class AccessRulesDocumentDto {
  @ApiProperty(property(SUB_RULES, ['read', 'create', 'update', 'delete']))
  sub!: AccessRulesDocument['sub'];

  @ApiProperty(property(PUBLIC_RULES, ['read']))
  public!: AccessRulesDocument['public'];

  @ApiProperty(property(PROTECTED_FIELDS, ['sub', 'public']))
  protectedFields!: AccessRulesDocument['protectedFields'];
}

/** A collection's access rules, every member written out, and when they were set. */
export class AccessRulesDto extends AccessRulesDocumentDto {
  /**
   * When the rules were last set (RFC 3339); null when the collection was registered before
   * collections had access rules and they were never set: the defaults hold.
   */
  @ApiProperty({
    type: String,
    format: 'date-time',
    nullable: true,
    example: '2026-11-29T10:00:00.000Z',
  })
  changedAt!: string | null;
}

export function toAccessRulesDto(view: AccessRulesView): AccessRulesDto {
  return {
    sub: view.rules.sub,
    public: view.rules.public,
    protectedFields: view.rules.protectedFields,
    changedAt: view.changedAt ? view.changedAt.toISOString() : null,
  };
}
