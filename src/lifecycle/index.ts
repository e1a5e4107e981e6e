/**
 * What other modules may use of the lifecycle: the module, the erasures and moves it runs, and
 * the account export with its record DTOs.
 */
export { LifecycleModule } from './lifecycle.module';
export { AccountExport } from './account-export.service';
export { ACCOUNT_EXPORT_MODELS, ACCOUNT_EXPORT_RESPONSE } from './dto/account-export.dto';
export { ErasureService } from './erasure.service';
export { TenantMoves } from './tenant-moves.service';
export type { TenantMove } from './tenant-move.repository';
export type { MovePhase, MoveStatus } from './tenant-move.schema';
