import { Controller, Get, Query } from '@nestjs/common';
import { ApiBadRequestResponse, ApiOkResponse, ApiTags } from '@nestjs/swagger';
import { Auth, CurrentPrincipal, NeedsScope, tenantOf, type CustomerPrincipal } from '../auth';
import { ProblemDto } from '../common/errors';
import { parseDayRange, TenantUsageDto, UsageRangeQueryDto, UsageService } from '../usage';

/** What the caller's tenant used, per UTC day (docs/usage.md). */
@ApiTags('me')
@Controller('me')
export class MeUsageController {
  constructor(private readonly usage: UsageService) {}

  /**
   * Your tenant's usage (the user's, or with a team key or X-Team the team's) for every UTC day
   * from `from` to `to`, both included (at most 366 days; default: the 31 days to today), and
   * the range's total: requests by class, bytes in and out, stream minutes, webhook events.
   * Each instance writes what it counted every USAGE_FLUSH_MS: the last minute's usage may not
   * show yet. Each day also shows what the tenant stored (`itemsStored`, `fileBytesStored`) as
   * the day's snapshot measured it at `measuredAt` — once a day, from USAGE_SNAPSHOT_HOUR UTC;
   * null before it; not summed into the total. Root and team keys holding `usage:read`.
   */
  @Get('usage')
  @NeedsScope('usage:read')
  @Auth('root', 'team')
  @ApiOkResponse({ type: TenantUsageDto })
  @ApiBadRequestResponse({
    type: ProblemDto,
    description:
      'VALIDATION_FAILED: `from` or `to` is not a UTC day (YYYY-MM-DD), `from` is after `to`, or the range is longer than 366 days',
  })
  async getMyUsage(
    @CurrentPrincipal() principal: CustomerPrincipal,
    @Query() query: UsageRangeQueryDto,
  ): Promise<TenantUsageDto> {
    const range = parseDayRange(query, Date.now());
    return TenantUsageDto.from(await this.usage.ofTenant(tenantOf(principal), range));
  }
}
