export { MetricsModule } from './metrics.module';
export { monitoredConnection, ServiceMetrics } from './service-metrics';
export { METRICS_PATH, UNMATCHED_ROUTE } from './http-metrics';
