import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';

const ANY_SCALAR = {
  description: 'A stored value (string, number, boolean, null; timestamps as RFC 3339)',
  nullable: true,
  anyOf: [
    { type: 'string' },
    { type: 'number' },
    { type: 'boolean' },
    { type: 'object' },
    { type: 'array', items: {} },
  ],
} as const;

export class AggregateGroupDto {
  /** The groupBy field's value shared by the group; null for items without the field. */
  @ApiProperty(ANY_SCALAR as never)
  key!: unknown;

  /** count: the number of items; sum/avg/min/max: the result over the group (null when no item holds a number). */
  @ApiProperty(ANY_SCALAR as never)
  value!: unknown;
}

export class AggregateResultDto {
  /** One entry per distinct groupBy value, in ascending key order. */
  @ApiProperty({ type: [AggregateGroupDto] })
  groups!: AggregateGroupDto[];

  /** True when more groups exist than AGGREGATE_MAX_GROUPS (default 1,000): the answer holds the first ones. */
  @ApiProperty({ example: false })
  truncated!: boolean;
}

export class IndexSuggestionDto {
  /** Field → direction, in the body format of POST /data/{collection}/index. */
  @ApiProperty({
    type: 'object',
    additionalProperties: { type: 'integer', enum: [1, -1] },
    example: { status: 1, _createdAt: -1, total: 1 },
  })
  fields!: Record<string, 1 | -1>;
}

export class ExplainResultDto {
  /** The index the plan reads; null when it scans the collection; "unknown" when the database's explain output is not MongoDB's. */
  @ApiProperty({ type: 'string', nullable: true, example: 'status_1__createdAt_-1' })
  indexUsed!: string | null;

  /** The plan's first stage (IXSCAN, COLLSCAN, FETCH, SORT, LIMIT, …; EOF for a collection that does not exist), or "unknown". */
  @ApiProperty({ example: 'LIMIT' })
  stage!: string;

  /** Documents the database read to answer (MongoDB only). */
  @ApiPropertyOptional({ example: 12 })
  docsExamined?: number;

  /** The index that would serve the query (equality fields, then sort, then ranges), when none does or the database does not say. */
  @ApiPropertyOptional({ type: IndexSuggestionDto })
  suggestion?: IndexSuggestionDto;
}
