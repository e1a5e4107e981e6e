import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-http';
import { ExpressInstrumentation, ExpressLayerType } from '@opentelemetry/instrumentation-express';
import { HttpInstrumentation } from '@opentelemetry/instrumentation-http';
import { MongoDBInstrumentation } from '@opentelemetry/instrumentation-mongodb';
import { defaultResource, resourceFromAttributes } from '@opentelemetry/resources';
import { NodeSDK, type NodeSDKConfiguration } from '@opentelemetry/sdk-node';
import { ATTR_SERVICE_NAME, ATTR_SERVICE_VERSION } from '@opentelemetry/semantic-conventions';
import type { IncomingMessage } from 'node:http';
import { SERVICE_IDENTITY } from './common/http/logger';

/** Probes and scrapes arrive every few seconds and would bury the traces of real requests. */
const UNTRACED_PATHS = /^\/(health|metrics)(\/|\?|$)/;

export interface TracingOptions {
  /** Where finished spans go; default: batched to the OTLP/HTTP exporter (OTEL_EXPORTER_OTLP_*). */
  spanProcessors?: NodeSDKConfiguration['spanProcessors'];
}

/**
 * Starts the OpenTelemetry Node SDK: HTTP server spans (continuing an incoming `traceparent`:
 * the SDK's default propagators are W3C trace context and baggage), Express router and handler
 * spans, and MongoDB command spans below them. Traces only: metrics are served at /metrics and
 * logs go to stdout, so the SDK's metric and log exporters stay off. The SDK reads its standard
 * OTEL_* variables itself (service name and resource attributes, headers, sampler, batching).
 * Must run before express, http and mongodb are required: the instrumentations patch them as
 * they load.
 */
export function startTracing(options: TracingOptions = {}): NodeSDK {
  const sdk = new NodeSDK({
    // package.json's name and version, unless OTEL_SERVICE_NAME / OTEL_RESOURCE_ATTRIBUTES say otherwise.
    resource: defaultResource().merge(
      resourceFromAttributes({
        [ATTR_SERVICE_NAME]: SERVICE_IDENTITY.service,
        [ATTR_SERVICE_VERSION]: SERVICE_IDENTITY.version,
      }),
    ),
    ...(options.spanProcessors
      ? { spanProcessors: options.spanProcessors }
      : { traceExporter: new OTLPTraceExporter() }),
    instrumentations: [
      new HttpInstrumentation({
        ignoreIncomingRequestHook: (req: IncomingMessage) => UNTRACED_PATHS.test(req.url ?? ''),
      }),
      // One span per middleware (helmet, CORS, body parsing, …) would say little and cost a lot.
      new ExpressInstrumentation({ ignoreLayersType: [ExpressLayerType.MIDDLEWARE] }),
      // Statements are recorded without their values (enhancedDatabaseReporting off): tenant data
      // stays out of the traces.
      new MongoDBInstrumentation(),
    ],
    metricReaders: [],
    logRecordProcessors: [],
  });
  sdk.start();
  return sdk;
}
