import { Prop, Schema, SchemaFactory } from '@nestjs/mongoose';

/**
 * Where one tenant (all its branches) keeps its collections: a cluster, and the tenant's database
 * there, whose name is the document's `_id`. One per tenant (the `_id` is unique), written when
 * the tenant is created. It names the tenant only by that digest (tenantDatabaseName), so it is
 * kept after an erasure without naming the erased account, and a tenant created again with the
 * same id finds its database where it was.
 */
@Schema({
  collection: 'tenant_placements',
  versionKey: false,
  timestamps: { createdAt: true, updatedAt: false },
})
export class TenantPlacementDocument {
  /** The tenant's database: `tenant_` and a digest of the main database name and the tenant. */
  @Prop({ type: String, required: true })
  _id!: string;

  /** A name of DATA_CLUSTERS; the service refuses to start while one is not configured. */
  @Prop({ required: true })
  cluster!: string;

  /**
   * The cluster whose cluster database holds the tenant's change feed (`events`, `event_intents`).
   * Absent on placements made before feeds were placed: the main database.
   */
  @Prop({ type: String })
  feed?: string;

  /** Set while a move takes the feed to another cluster (see FeedLocation). */
  @Prop({ type: Object })
  feedMoving?: { to: string; move: string; phase: 'copying' | 'paused' };

  createdAt!: Date;
}

export const TenantPlacementSchema = SchemaFactory.createForClass(TenantPlacementDocument);
// Counts of tenants per cluster (placement of new tenants, GET /admin/clusters).
TenantPlacementSchema.index({ cluster: 1 }, { name: 'cluster' });
