import { Inject, Injectable } from '@nestjs/common';
import { APP_CONFIG, type AppConfig } from '../config';
import { deploymentLimits } from './plan-limits';
import { TenantLimits, type ActiveLimits } from './tenant-limits';

/** The deployment's limits for every tenant: what applies while no tenant holds a plan. */
@Injectable()
export class DeploymentLimits extends TenantLimits {
  private readonly active: ActiveLimits;

  constructor(@Inject(APP_CONFIG) config: AppConfig) {
    super();
    this.active = { plan: null, limits: deploymentLimits(config) };
  }

  of(): Promise<ActiveLimits> {
    return Promise.resolve(this.active);
  }
}
