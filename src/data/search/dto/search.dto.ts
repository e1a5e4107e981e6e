import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { IsDefined } from 'class-validator';
import { OptionalField } from '../../../common/dto';
import { FreeFormMember, JsonObjectBody } from '../../../common/http/validation';
import { CLIENT_PATH_SCHEMA_PATTERN, MAX_FIELD_NAME_LENGTH } from '../../query/json-guard';
import { SEARCH_STATES, type SearchState } from '../search-rule';
import type { SearchView } from '../search.service';
import { MIN_TOKEN_LENGTH } from '../tokenizer';

/**
 * `PUT /data/{c}/search`: the fields whose words are indexed, and the shortest word indexed.
 * Checked in full by readSearchConfig (400 VALIDATION_FAILED naming every wrong member).
 */
@JsonObjectBody()
export class PutSearchDto {
  @IsDefined()
  @FreeFormMember()
  @ApiProperty({
    type: [String],
    minItems: 1,
    // SEARCH_MAX_FIELDS's default; a deployment may set it otherwise (400 beyond it).
    maxItems: 16,
    uniqueItems: true,
    items: {
      type: 'string',
      pattern: CLIENT_PATH_SCHEMA_PATTERN,
      maxLength: MAX_FIELD_NAME_LENGTH,
    },
    description:
      'Field paths (dotted, distinct, not _id nor a timestamp) whose text is split into words: strings, and strings in arrays and objects under them; at most SEARCH_MAX_FIELDS (default 16). None may be a protected field of the access rules (400 PROTECTED_FIELD).',
    example: ['title', 'body'],
  })
  fields!: unknown;

  @OptionalField()
  @FreeFormMember()
  @ApiPropertyOptional({
    type: 'integer',
    minimum: MIN_TOKEN_LENGTH.min,
    maximum: MIN_TOKEN_LENGTH.max,
    default: MIN_TOKEN_LENGTH.default,
    description:
      'Shorter words are not indexed, nor looked for in `q` (a CJK character is a word whatever this is)',
  })
  minTokenLength?: unknown;
}

class SearchFailureDto {
  @ApiProperty({ example: 'TOO_MANY_WORDS' })
  code!: string;

  @ApiProperty({ example: "Item 'a1': The item holds 1200 distinct words …" })
  detail!: string;
}

/** A collection's search configuration and how far its build is. */
export class SearchDto {
  @ApiProperty({ type: [String], example: ['title', 'body'] })
  fields!: string[];

  @ApiProperty({ example: 2 })
  minTokenLength!: number;

  @ApiProperty({
    enum: SEARCH_STATES,
    description:
      '`building`: the word lists of the items stored before are being written (`q` answers 409 SEARCH_BUILDING); `ready`: `q` answers; `failed`: the build stopped (see `failure`; `q` answers 409 SEARCH_FAILED) until the configuration is PUT again',
  })
  state!: SearchState;

  @ApiProperty({ description: 'Items the build has gone through (every item once `ready`)' })
  indexed!: number;

  @ApiProperty({ description: 'Items in the collection' })
  total!: number;

  @ApiProperty({ description: 'Counts the configurations of the collection: each PUT the next' })
  version!: number;

  @ApiPropertyOptional({ type: SearchFailureDto, description: 'Why the build failed' })
  failure?: SearchFailureDto;
}

/** What a PUT answers: the new configuration's state and version. */
export class SearchStartedDto {
  @ApiProperty({ enum: ['building'] })
  state!: 'building';

  @ApiProperty({ example: 1 })
  version!: number;
}

export function toSearchDto(view: SearchView): SearchDto {
  return {
    fields: view.fields,
    minTokenLength: view.minTokenLength,
    state: view.state,
    indexed: view.indexed,
    total: view.total,
    version: view.version,
    ...(view.failure ? { failure: view.failure } : {}),
  };
}
