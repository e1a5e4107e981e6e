/** What other modules may use of the lifecycle: the module and the erasures it runs. */
export { LifecycleModule } from './lifecycle.module';
export { ErasureService } from './erasure.service';
