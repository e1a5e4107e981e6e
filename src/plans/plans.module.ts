import { Global, Module } from '@nestjs/common';
import { DeploymentLimits } from './deployment-limits';
import { TenantLimits } from './tenant-limits';

/**
 * Plans and the limits they set (docs/plans.md): every limit check reads a tenant's limits
 * through TenantLimits.
 */
@Global()
@Module({
  providers: [{ provide: TenantLimits, useClass: DeploymentLimits }],
  exports: [TenantLimits],
})
export class PlansModule {}
