export { DataClusters } from './data-clusters';
export { PlacementModule } from './placement.module';
export { NoOpenClusterError, UnknownRegionError } from './placement.errors';
export { tenantDatabaseName, type TenantLocation } from './tenant-location';
export { TenantPlacements, UnconfiguredClusterError } from './tenant-placements.service';
