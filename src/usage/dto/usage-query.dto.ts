import { ApiPropertyOptional } from '@nestjs/swagger';
import { IsString, Matches } from 'class-validator';
import { OptionalField } from '../../common/dto';

const DAY = /^\d{4}-\d{2}-\d{2}$/;

/** `from` and `to` of a usage request: UTC days, both included (docs/usage.md). */
export class UsageRangeQueryDto {
  /** The first day (UTC, YYYY-MM-DD); default: 30 days before `to`. */
  @OptionalField()
  @IsString()
  @Matches(DAY, { message: 'from must be a UTC day written YYYY-MM-DD' })
  @ApiPropertyOptional({ format: 'date', example: '2026-01-01' })
  from?: string;

  /** The last day (UTC, YYYY-MM-DD), at most 366 days after `from`; default: today. */
  @OptionalField()
  @IsString()
  @Matches(DAY, { message: 'to must be a UTC day written YYYY-MM-DD' })
  @ApiPropertyOptional({ format: 'date', example: '2026-01-31' })
  to?: string;
}
