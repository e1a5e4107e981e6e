import { Prop, Schema, SchemaFactory } from '@nestjs/mongoose';
import type { Types } from 'mongoose';
import { NAMESPACE_INDEX_KEYS, NamespacedDocument } from '../../common/tenancy/namespace';
import type { CollectionRules } from '../rules/collection-rules';

/** A collection being moved: to which cluster and database, by which move, in which phase. */
export interface CollectionMoving {
  move: string;
  cluster: string;
  database: string;
  /** `copying`: writes go to the source as usual; `paused`: writes are refused (503). */
  phase: 'copying' | 'paused';
}

/**
 * One tenant collection: (namespace, name) → the physical MongoDB collection.
 * Physical names are made by the server (`d_<id of this entry>`), so no client name ever reaches
 * a native name.
 */
@Schema({
  collection: 'data_collections',
  versionKey: false,
  timestamps: { createdAt: true, updatedAt: false },
})
export class CollectionRegistryDocument extends NamespacedDocument {
  _id!: Types.ObjectId;

  /** The name clients use. */
  @Prop({ required: true })
  name!: string;

  @Prop({ required: true })
  physical!: string;

  /**
   * Where the native collection lives: the tenant's placement when the collection was
   * registered. Both absent on collections registered before tenants were placed: the main
   * database.
   */
  @Prop({ type: String })
  cluster?: string;

  @Prop({ type: String })
  database?: string;

  /**
   * Set while a tenant move copies this collection (CollectionMover): the move, where to, and
   * whether writes are paused for the last comparison. Every instance reads an entry that has
   * it afresh for each request, and writes to it announce themselves (collection-write-markers).
   */
  @Prop({ type: Object })
  moving?: CollectionMoving;

  /**
   * Position of the collection in its namespace (0, 1, …), below the quota. Unique per namespace,
   * so a slot is a place in the quota and concurrent creates cannot exceed it; a drop gives its
   * slot back.
   */
  @Prop({ required: true })
  slot!: number;

  /** The collection's schema and expiry, when it has any (rules/collection-rules.ts). */
  @Prop({ type: Object })
  rules?: CollectionRules;

  createdAt!: Date;
}

export const CollectionRegistrySchema = SchemaFactory.createForClass(CollectionRegistryDocument);
// Serves every data request's name lookup and GET /data (sorted by name); unique so that
// concurrent first writes to one name agree on one physical collection.
CollectionRegistrySchema.index(
  { ...NAMESPACE_INDEX_KEYS, name: 1 },
  { unique: true, name: 'namespace_name' },
);
// Makes the collection quota exact under concurrency (see `slot`).
CollectionRegistrySchema.index(
  { ...NAMESPACE_INDEX_KEYS, slot: 1 },
  { unique: true, name: 'namespace_slot' },
);
// Collections per cluster (GET /admin/clusters).
CollectionRegistrySchema.index({ cluster: 1 }, { name: 'cluster' });
// The collections with an expiry rule, which the expiry sweep visits (a plain index: a range on
// afterSeconds skips the entries without a rule, on every supported database).
CollectionRegistrySchema.index({ 'rules.expiry.afterSeconds': 1 }, { name: 'rules_expiry' });
