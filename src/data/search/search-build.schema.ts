import { Prop, Schema, SchemaFactory } from '@nestjs/mongoose';
import { Schema as MongooseSchema, type Types } from 'mongoose';
import { TENANT_KINDS, type TenantKind } from '../../common/tenancy/namespace';

/**
 * What a search run does to a collection's items: `build` writes the word lists of one
 * configuration (its version), `clear` removes them once the configuration was deleted.
 */
export const SEARCH_RUN_KINDS = ['build', 'clear'] as const;
export type SearchRunKind = (typeof SEARCH_RUN_KINDS)[number];

/**
 * One run over a collection's items for its search configuration (docs/data.md, "Search"), held
 * by the instance working on it until `leaseUntil` and taken over by any instance after that.
 * It walks the items in `_id` order and records the last one done, so a takeover goes on from
 * there. The records of a collection go with it when it is dropped.
 */
@Schema({ collection: 'data_search_runs', versionKey: false })
export class SearchRunDocument {
  _id!: Types.ObjectId;

  /** The collection: its registry entry (a collection dropped and made again has another id). */
  @Prop({ required: true })
  entryId!: string;

  /** The native collection (`d_<entry id>`): what a drop deletes the records by. */
  @Prop({ required: true })
  physical!: string;

  @Prop({ type: String, required: true, enum: TENANT_KINDS })
  tenantKind!: TenantKind;

  @Prop({ required: true })
  tenantId!: string;

  /** The branch (`''`: the main one). */
  @Prop({ type: String, default: '' })
  branch!: string;

  @Prop({ required: true })
  name!: string;

  @Prop({ type: String, required: true, enum: SEARCH_RUN_KINDS })
  kind!: SearchRunKind;

  /** The configuration version a build writes the words of (a clear: the one deleted). */
  @Prop({ type: Number, required: true })
  version!: number;

  @Prop({ type: String, required: true, enum: ['running', 'done'] })
  status!: 'running' | 'done';

  /**
   * Not before then: every instance has seen the change of configuration by then (the registry
   * cache's time and a margin), so every write keeps the words as the run does.
   */
  @Prop({ type: Date, required: true })
  startAt!: Date;

  /** The `_id` of the last item done (any type an item id has); absent before the first batch. */
  @Prop({ type: MongooseSchema.Types.Mixed })
  lastId?: unknown;

  /** Items walked so far. */
  @Prop({ type: Number, default: 0 })
  indexed!: number;

  @Prop({ type: Date, required: true })
  leaseUntil!: Date;

  /** How many times it was started or taken over (more than 1: it was resumed). */
  @Prop({ type: Number, default: 1 })
  runs!: number;

  @Prop({ type: Date, required: true })
  createdAt!: Date;
}

export const SearchRunSchema = SchemaFactory.createForClass(SearchRunDocument);
// One build per configuration version, one clear per deleted version.
SearchRunSchema.index({ entryId: 1, kind: 1, version: 1 }, { unique: true, name: 'entry_run' });
// The poll's question: which running runs have no live holder.
SearchRunSchema.index({ status: 1, leaseUntil: 1 }, { name: 'status_lease' });
SearchRunSchema.index({ physical: 1 }, { name: 'physical' });
