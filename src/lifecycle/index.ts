/** What other modules may use of the lifecycle: the module, the erasures and moves it runs. */
export { LifecycleModule } from './lifecycle.module';
export { ErasureService } from './erasure.service';
export { TenantMoves } from './tenant-moves.service';
export type { TenantMove } from './tenant-move.repository';
export type { MoveStatus } from './tenant-move.schema';
