import { Global, Module, type DynamicModule, type ModuleMetadata, type Type } from '@nestjs/common';
import { MongooseModule } from '@nestjs/mongoose';
import { PlanCatalogue } from './plan-catalogue.service';
import { PLAN_HOLDERS, type PlanHolders } from './plan-holders.port';
import { PlanLimitsCache } from './plan-limits-cache';
import { PlanRepository } from './plan.repository';
import { PlanDocument, PlanSchema } from './plan.schema';
import { TenantLimits } from './tenant-limits';

export interface PlansModuleOptions {
  /** The modules that provide `holders`. */
  imports: NonNullable<ModuleMetadata['imports']>;
  /** The provider that answers the plan-holders port (users' and teams' plan entries). */
  holders: Type<PlanHolders>;
}

/**
 * Plans and the limits they set (docs/plans.md): the catalogue, and TenantLimits, through which
 * every limit check reads a tenant's limits. Global, as every module with a limit reads them.
 */
@Global()
@Module({})
export class PlansModule {
  static register(options: PlansModuleOptions): DynamicModule {
    return {
      module: PlansModule,
      imports: [
        MongooseModule.forFeature([{ name: PlanDocument.name, schema: PlanSchema }]),
        ...options.imports,
      ],
      providers: [
        PlanRepository,
        PlanLimitsCache,
        PlanCatalogue,
        { provide: TenantLimits, useExisting: PlanLimitsCache },
        { provide: PLAN_HOLDERS, useClass: options.holders },
      ],
      exports: [TenantLimits, PlanLimitsCache, PlanCatalogue],
    };
  }
}
