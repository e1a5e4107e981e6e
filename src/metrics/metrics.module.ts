import { Module, type DynamicModule } from '@nestjs/common';
import { BackgroundTasks } from '../common/scheduling/background-tasks';
import { MetricsController } from './metrics.controller';
import { MetricsTokenGuard } from './metrics-token.guard';
import { ServiceMetrics } from './service-metrics';

/**
 * Prometheus metrics at /metrics (METRICS_ENABLED). `metrics` is made by the root module, which
 * also hands it to the database connection; without it (metrics off) this module is empty and
 * /metrics is an unknown route.
 */
@Module({})
export class MetricsModule {
  static forRoot(metrics: ServiceMetrics | undefined): DynamicModule {
    if (!metrics) return { module: MetricsModule };
    return {
      module: MetricsModule,
      controllers: [MetricsController],
      providers: [
        { provide: ServiceMetrics, useValue: metrics },
        MetricsTokenGuard,
        {
          // The background tasks' runs, counted from the host's reports.
          provide: 'TASK_METRICS',
          inject: [BackgroundTasks],
          useFactory: (tasks: BackgroundTasks) => tasks.observe(metrics.tasks.observer),
        },
      ],
      exports: [ServiceMetrics],
    };
  }
}
