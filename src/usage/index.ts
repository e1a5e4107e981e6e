export { UsageModule, type UsageModuleOptions } from './usage.module';
export { UsageGuard } from './usage.guard';
export { UsageMeter } from './usage-meter';
export { UsageService, type TenantUsage } from './usage.service';
export { UsageFlusher } from './usage-flusher';
export { UsageSweeper } from './usage-sweeper';
export { UsageSnapshots } from './usage-snapshots';
export { USAGE_GAUGES, type GaugeValues, type UsageGaugeSource } from './usage-gauges';
export { MeteredAs } from './metered-as';
export { REQUEST_CLASSES, USAGE_COUNTERS, type UsageCounts } from './usage-counts';
export { rowKeyOf, type UsageRow } from './usage-counters';
export { parseDayRange, MAX_RANGE_DAYS, DEFAULT_RANGE_DAYS, type DayRange } from './usage-day';
export {
  TenantUsageDto,
  UsageCountsDto,
  UsageDayDto,
  UsageMeasuredDto,
  UsageRowDto,
  UsageTenantDto,
} from './dto/usage.dto';
export { UsageRangeQueryDto } from './dto/usage-query.dto';
