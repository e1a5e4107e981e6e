import { Inject, Injectable } from '@nestjs/common';
import type { Tenant } from '../common/tenancy/namespace';
import { APP_CONFIG, type AppConfig } from '../config';
import { FileMoves } from '../files';
import { TenantPlacements, type TenantLocation } from '../placement';
import { TenantMoveRepository, type TenantMove } from './tenant-move.repository';

/**
 * The files' part of a tenant move. It runs after the collections and the feed, when the
 * placement has named the target for a whole grace period: every instance starts new uploads
 * there, so what is left at the old location only shrinks.
 *
 * Every stored file whose bytes are elsewhere is copied to the tenant's database on the target
 * (an upsert of its chunks and GridFS file), and its record is pointed there; downloads and
 * links read the record afresh, so from then on they read the copy. Uploads still writing at the
 * old location are waited for (polling every LIFECYCLE_POLL_MS, the lease renewed meanwhile) until
 * they are stored — then moved like the rest — or given up by the file sweep; the pass ends only
 * when no file of the tenant has bytes elsewhere.
 *
 * Downloads that opened the old bytes before their record moved keep reading them: the old bytes
 * are noted on the move before they are copied and removed only when the move retires, at least
 * COLLECTION_DROP_GRACE_MS (which outlasts the longest request) after the pass ended — the same
 * grace that protects readers of a moved collection's source. A run that dies halfway starts the
 * pass again: copying is an upsert and pointing a record is idempotent, so nothing is lost or
 * doubled, and the noted old bytes are removed whichever run retires the move.
 */
@Injectable()
export class TenantFilesMove {
  private readonly pollMs: number;

  constructor(
    private readonly moves: TenantMoveRepository,
    private readonly files: FileMoves,
    private readonly placements: TenantPlacements,
    @Inject(APP_CONFIG) config: AppConfig,
  ) {
    this.pollMs = config.lifecycle.pollMs;
  }

  /** Moves the tenant's files to the move's cluster; `renew` throws once the lease is lost. */
  async move(move: TenantMove, tenant: Tenant, renew: () => Promise<void>): Promise<void> {
    await this.files.moveTenant(tenant, this.target(move, tenant), {
      noteSources: async (sources) => {
        await renew();
        await this.moves.addFileSources(move.id, sources, move.leaseUntil);
      },
      // Renewed after every file: a batch of large files can take longer than the lease.
      moved: async () => {
        await renew();
        await this.moves.update(move.id, {}, { filesCopied: 1 });
      },
      wait: async () => {
        await renew();
        await new Promise((resolve) => setTimeout(resolve, this.pollMs));
      },
    });
  }

  /** Removes the old bytes of the moved files (after the grace); safe to repeat. */
  async retire(move: TenantMove, tenant: Tenant): Promise<void> {
    await this.files.removeSources(move.fileSources ?? [], this.target(move, tenant));
  }

  private target(move: TenantMove, tenant: Tenant): TenantLocation {
    return { cluster: move.cluster, database: this.placements.databaseOf(tenant) };
  }
}
