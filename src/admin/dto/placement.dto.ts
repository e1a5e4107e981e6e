import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { IsString, Matches } from 'class-validator';
import { OptionalField } from '../../common/dto';
import { TENANT_KINDS, type TenantKind } from '../../common/tenancy/namespace';
import { CLUSTER_NAME } from '../../config';
import type { MovePhase, MoveStatus, TenantMove } from '../../lifecycle';

/** The optional `region` of a new user or team (POST /admin/users, POST /admin/teams). */
export class PlacementRequestDto {
  /**
   * Where the tenant's data must live: one of the regions of DATA_CLUSTERS. Absent: any open
   * cluster, the one with the fewest tenants. A region no cluster has, or none of whose clusters
   * is open → 400 (UNKNOWN_REGION, NO_OPEN_CLUSTER), and nothing is created.
   */
  @OptionalField()
  @IsString()
  @Matches(CLUSTER_NAME, { message: 'region must be 1-32 of a-z 0-9 -' })
  @ApiPropertyOptional({ example: 'eu', pattern: CLUSTER_NAME.source })
  region?: string;
}

/** GET /admin/tenants/{kind}/{id}/placement. */
export class PlacementDto {
  /**
   * The cluster of DATA_CLUSTERS; null for a tenant created before tenants were placed, whose
   * collections are in the main database.
   */
  @ApiProperty({ type: String, nullable: true, example: 'eu-1' })
  cluster!: string | null;

  /** The tenant's database on that cluster (the main database when `cluster` is null). */
  @ApiProperty({ example: 'tenant_3b6f0c1d2e4a5968778899aabbccddee' })
  database!: string;
}

/** One cluster of DATA_CLUSTERS, as GET /admin/clusters lists it. */
export class ClusterDto {
  @ApiProperty({ example: 'eu-1' })
  name!: string;

  @ApiProperty({ example: 'eu' })
  region!: string;

  /** Whether new tenants are placed here. */
  @ApiProperty()
  open!: boolean;

  /** Tenants placed here. */
  @ApiProperty({ example: 1200 })
  tenants!: number;

  /** Collections registered here. */
  @ApiProperty({ example: 8400 })
  collections!: number;

  /** Whether it answered a ping within DB_SERVER_SELECTION_TIMEOUT_MS. */
  @ApiProperty()
  reachable!: boolean;
}

/** POST /admin/tenants/{kind}/{id}/move. */
export class MoveRequestDto {
  /** The cluster of DATA_CLUSTERS to move the tenant to: open, and not the one it is on. */
  @IsString()
  @Matches(CLUSTER_NAME, { message: 'cluster must be 1-32 of a-z 0-9 -' })
  @ApiProperty({ example: 'eu-2', pattern: CLUSTER_NAME.source })
  cluster!: string;
}

/** A tenant move: POST /admin/tenants/{kind}/{id}/move, GET /admin/moves[/{id}]. */
export class MoveDto {
  @ApiProperty({ example: '6740a1f3c2b4e5d6f7a8b9c0', pattern: '^[0-9a-f]{24}$' })
  id!: string;

  @ApiProperty({ enum: TENANT_KINDS })
  kind!: TenantKind;

  /** The tenant's database (its placement's key); a move names its tenant by nothing else. */
  @ApiProperty({ example: 'tenant_3b6f0c1d2e4a5968778899aabbccddee' })
  database!: string;

  /** Where the tenant goes. */
  @ApiProperty({ example: 'eu-2' })
  cluster!: string;

  /** The cluster its placement named before; null for a tenant never placed (the main database). */
  @ApiProperty({ type: String, nullable: true, example: 'eu-1' })
  from!: string | null;

  /**
   * `running` until every collection is switched and the sources are gone (it survives restarts:
   * another instance takes it over); `failed` (`error` says why): a collection's last
   * difference could not be copied within MOVE_MAX_WRITE_PAUSE_MS in its bounded pauses, the
   * move passed its `deadlineAt`, or it made no progress for MOVE_STALL_MS — that collection and
   * those after it stay where they were (all of them, and the placement, when none was switched).
   * A move always ends, by `deadlineAt` plus COLLECTION_DROP_GRACE_MS and the sources' removal
   * (docs/deployment.md, "How long a move takes").
   */
  @ApiProperty({ enum: ['running', 'done', 'failed'] })
  status!: MoveStatus;

  /**
   * `announcing`: the tenant's collections are marked, every instance is given time to see it;
   * `copying`: collections, then the feed, then files are copied and switched one after the
   * other; `retiring`: the sources are removed.
   */
  @ApiProperty({ enum: ['announcing', 'copying', 'retiring'] })
  phase!: MovePhase;

  /**
   * The pass under way over the collection (or the feed) being copied, from 1: the first compares
   * everything, later ones copy what changed since the one before, a pause's last copy counts as
   * one. 0 before the copy starts.
   */
  @ApiProperty({ minimum: 0, example: 2 })
  pass!: number;

  /** Items (or unique-value claims) the pass under way has left to compare and copy. */
  @ApiProperty({ minimum: 0, example: 340 })
  itemsLeft!: number;

  /** When the move last made progress; a move without progress for MOVE_STALL_MS fails. */
  @ApiProperty({ format: 'date-time' })
  progressAt!: string;

  /** The tenant's items when the move began: its deadline counts them (null until counted). */
  @ApiProperty({ type: Number, nullable: true, minimum: 0, example: 12000 })
  items!: number | null;

  /**
   * By when the move must have made its switches, or it fails: when it began announcing, plus
   * COLLECTION_DROP_GRACE_MS + MOVE_BASE_TIME_MS + MOVE_TIME_PER_1000_ITEMS_MS per thousand
   * `items` (null until counted).
   */
  @ApiProperty({ format: 'date-time', nullable: true, type: String })
  deadlineAt!: string | null;

  /** The tenant's collections the move takes (every branch). */
  @ApiProperty({ minimum: 0, example: 12 })
  collections!: number;

  @ApiProperty({ minimum: 0, example: 5 })
  collectionsCopied!: number;

  /** Items written to the target, catch-up copies included. */
  @ApiProperty({ minimum: 0, example: 12000 })
  itemsCopied!: number;

  /** Files whose bytes were copied to the target and whose records point there now. */
  @ApiProperty({ minimum: 0, example: 40 })
  filesCopied!: number;

  /** How often it was started or taken over: above 1, it was resumed after an interruption. */
  @ApiProperty({ minimum: 1, example: 1 })
  runs!: number;

  @ApiProperty({ format: 'date-time' })
  startedAt!: string;

  @ApiProperty({ format: 'date-time', nullable: true, type: String })
  finishedAt!: string | null;

  /** Why it failed; null otherwise. */
  @ApiProperty({ type: String, nullable: true })
  error!: string | null;

  static from(move: TenantMove): MoveDto {
    return {
      id: move.id,
      kind: move.kind,
      database: move.database,
      cluster: move.cluster,
      from: move.from,
      status: move.status,
      phase: move.phase,
      pass: move.pass ?? 0,
      itemsLeft: move.itemsLeft ?? 0,
      progressAt: (move.progressAt ?? move.startedAt).toISOString(),
      items: move.items ?? null,
      deadlineAt: move.deadlineAt ? move.deadlineAt.toISOString() : null,
      collections: move.collections,
      collectionsCopied: move.collectionsCopied,
      itemsCopied: move.itemsCopied,
      filesCopied: move.filesCopied ?? 0,
      runs: move.runs,
      startedAt: move.startedAt.toISOString(),
      finishedAt: move.finishedAt ? move.finishedAt.toISOString() : null,
      error: move.error ?? null,
    };
  }
}
