import { Prop, Schema, SchemaFactory } from '@nestjs/mongoose';
import type { Types } from 'mongoose';
import { TENANT_KINDS, type TenantKind } from '../common/tenancy/namespace';
import type { MovedFileSource } from '../files';

export type MoveStatus = 'running' | 'done' | 'failed';
/** `announcing`: collections marked, waiting for every instance to see it; `copying`; `retiring`: removing the sources. */
export type MovePhase = 'announcing' | 'copying' | 'retiring';

/** A native collection's location, as the registry writes it (absent cluster: the main database). */
export interface MovedLocation {
  physical: string;
  cluster?: string;
  database?: string;
}

/**
 * One tenant move (TenantMoves). Like an erasure it names its tenant only while it runs; what
 * remains names the tenant by its database (a digest).
 */
@Schema({ collection: 'tenant_moves', versionKey: false })
export class TenantMoveDocument {
  _id!: Types.ObjectId;

  @Prop({ type: String, required: true, enum: TENANT_KINDS })
  kind!: TenantKind;

  /** The subject or team id; removed when the move ends. */
  @Prop({ type: String })
  target?: string;

  /** The tenant's database (its placement's key). */
  @Prop({ required: true })
  database!: string;

  /** `move:<database>` while running, `ended:<id>` afterwards; unique: one running move per tenant. */
  @Prop({ required: true })
  activeKey!: string;

  /** The cluster the tenant goes to. */
  @Prop({ required: true })
  cluster!: string;

  /** The cluster its placement named before (null: never placed, the main database). */
  @Prop({ type: String, default: null })
  from!: string | null;

  @Prop({ type: String, required: true, enum: ['running', 'done', 'failed'] })
  status!: MoveStatus;

  @Prop({ type: String, required: true, enum: ['announcing', 'copying', 'retiring'] })
  phase!: MovePhase;

  /** When collections were last marked: the copy starts once every instance can have seen it. */
  @Prop({ type: Date })
  announcedAt?: Date;

  /** When the last collection was switched: its source goes once no instance can read it. */
  @Prop({ type: Date })
  switchedAt?: Date;

  /**
   * Whether the tenant's change feed goes along (it is in another deployment's cluster database),
   * and from which cluster's (null: the main database).
   */
  @Prop({ type: Boolean, default: false })
  feedMoves!: boolean;

  @Prop({ type: String, default: null })
  feedFrom!: string | null;

  /** Collections to move, and those moved. */
  @Prop({ type: Number, default: 0 })
  collections!: number;

  @Prop({ type: Number, default: 0 })
  collectionsCopied!: number;

  @Prop({ type: Number, default: 0 })
  itemsCopied!: number;

  /** The tenant's items when the move started: its deadline counts them. */
  @Prop({ type: Number })
  items?: number;

  /**
   * When the move must have made its switches (the start, plus COLLECTION_DROP_GRACE_MS,
   * MOVE_BASE_TIME_MS and MOVE_TIME_PER_1000_ITEMS_MS per thousand `items`): later, it fails.
   */
  @Prop({ type: Date })
  deadlineAt?: Date;

  /** The pass under way over what is copied now (1 on; each pause's last copy counts as one). */
  @Prop({ type: Number, default: 0 })
  pass!: number;

  /** Items (or claims) the pass under way has left to compare and copy. */
  @Prop({ type: Number, default: 0 })
  itemsLeft!: number;

  /** When the move last made progress (a mark, a pass, a batch): MOVE_STALL_MS later, it fails. */
  @Prop({ type: Date })
  progressAt?: Date;

  /** Sources to remove at the end, and copies of collections dropped while they were moved. */
  @Prop({ type: [Object], default: [] })
  sources!: MovedLocation[];

  @Prop({ type: [Object], default: [] })
  orphans!: MovedLocation[];

  /** Files moved, and where their old bytes are: removed at the end, after the grace. */
  @Prop({ type: Number, default: 0 })
  filesCopied?: number;

  @Prop({ type: [Object], default: [] })
  fileSources?: MovedFileSource[];

  /** The tenant databases on other clusters, dropped at the end. */
  @Prop({ type: [Object], default: [] })
  sourceDatabases!: { cluster: string; database: string }[];

  /** Until when the instance working on it holds it; after that any instance takes it over. */
  @Prop({ type: Date, required: true })
  leaseUntil!: Date;

  /** How many times it was started or taken over. */
  @Prop({ type: Number, default: 1 })
  runs!: number;

  /** Why it failed. */
  @Prop({ type: String })
  error?: string;

  @Prop({ type: Date, required: true })
  startedAt!: Date;

  @Prop({ type: Date })
  finishedAt?: Date;
}

export const TenantMoveSchema = SchemaFactory.createForClass(TenantMoveDocument);
TenantMoveSchema.index({ activeKey: 1 }, { unique: true, name: 'active_key' });
// The runner's question: which running moves have no live holder.
TenantMoveSchema.index({ status: 1, leaseUntil: 1 }, { name: 'status_lease' });

/**
 * A run of a move, claimed by inserting `<move id>:<run>`: of instances taking over an abandoned
 * move at once, exactly one inserts (an `_id` insert, atomic on every database), so a move is
 * never run twice at once — two runners could lift each other's pauses.
 */
@Schema({ collection: 'tenant_move_runs', versionKey: false })
export class TenantMoveRunDocument {
  @Prop({ type: String, required: true })
  _id!: string;

  @Prop({ type: Date, required: true })
  claimedAt!: Date;
}

export const TenantMoveRunSchema = SchemaFactory.createForClass(TenantMoveRunDocument);
