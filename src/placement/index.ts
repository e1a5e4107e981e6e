export { DataClusters } from './data-clusters';
export { PlacementModule } from './placement.module';
export { FeedMovingError, NoOpenClusterError, UnknownRegionError } from './placement.errors';
export { tenantDatabaseName, type TenantLocation } from './tenant-location';
export {
  TenantPlacements,
  UnconfiguredClusterError,
  type FeedLocation,
} from './tenant-placements.service';
export { MoveWriteMarkers } from './move-write-markers.repository';
export { MoveGate, type MovePassage } from './move-gate';
export {
  CATCH_UP_PASSES,
  CHANGE_MARKER_MARGIN_MS,
  MoveGivenUpError,
  PAUSE_ATTEMPTS,
  PauseTooLongError,
  switchWithPause,
  type MoveProgress,
  type PausedSwitch,
} from './move-pause';
export { ClusterDatabases, onEveryCluster, type ClusterCollection } from './cluster-databases';
export { feedWriteTarget, TenantContentGate } from './tenant-content-gate';
export { ClusterIdempotencyStores } from './cluster-idempotency-stores';
