import { Global, Module, type DynamicModule } from '@nestjs/common';
import { MongooseModule } from '@nestjs/mongoose';
import { CLUSTER_CLIENT_WATCHER, DataClusters, type ClusterClientWatcher } from './data-clusters';
import { TenantPlacementDocument, TenantPlacementSchema } from './tenant-placement.schema';
import { TenantPlacementsRepository } from './tenant-placements.repository';
import { TenantPlacements } from './tenant-placements.service';

/**
 * Where tenant data lives: the clusters of DATA_CLUSTERS and one placement per tenant (a cluster
 * and the tenant's database there). Global: tenant creation, the data seam and the operator API
 * all ask it.
 */
import { MoveWriteMarkerDocument, MoveWriteMarkerSchema } from './move-write-marker.schema';
import { MoveWriteMarkers } from './move-write-markers.repository';
import { ClusterDatabases } from './cluster-databases';
import { TenantContentGate } from './tenant-content-gate';
import { ClusterIdempotencyStores } from './cluster-idempotency-stores';

@Global()
@Module({})
export class PlacementModule {
  /** `watch` sees every cluster client opened (the root module counts its commands). */
  static forRoot(watch: ClusterClientWatcher): DynamicModule {
    return {
      module: PlacementModule,
      imports: [
        MongooseModule.forFeature([
          { name: TenantPlacementDocument.name, schema: TenantPlacementSchema },
          { name: MoveWriteMarkerDocument.name, schema: MoveWriteMarkerSchema },
        ]),
      ],
      providers: [
        { provide: CLUSTER_CLIENT_WATCHER, useValue: watch },
        DataClusters,
        TenantPlacementsRepository,
        TenantPlacements,
        MoveWriteMarkers,
        ClusterDatabases,
        TenantContentGate,
        ClusterIdempotencyStores,
      ],
      exports: [
        ClusterIdempotencyStores,
        DataClusters,
        TenantPlacements,
        MoveWriteMarkers,
        ClusterDatabases,
        TenantContentGate,
      ],
    };
  }
}
