// Loaded first by main.ts, before anything requires express, http or the MongoDB driver: the
// OpenTelemetry instrumentations patch those modules as they load. Tracing is on only when
// OTEL_EXPORTER_OTLP_ENDPOINT is set; otherwise this reads the configuration and nothing of the
// SDK is loaded.
import 'reflect-metadata';
import type { NodeSDK } from '@opentelemetry/sdk-node';
import { loadConfig } from './config/app-config';
import { loadDotEnvFile } from './config/dotenv-file';

function otlpEndpoint(): string | undefined {
  try {
    loadDotEnvFile();
    return loadConfig().tracing.otlpEndpoint;
  } catch {
    // An invalid configuration is reported by main.ts, which exits.
    return undefined;
  }
}

const sdk: NodeSDK | undefined = otlpEndpoint()
  ? // A require, not an import: only a process that traces loads the SDK.
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    (require('./tracing-sdk') as typeof import('./tracing-sdk')).startTracing()
  : undefined;

/** Exports the spans still buffered; called when the service shuts down. */
export async function shutdownTracing(): Promise<void> {
  await sdk?.shutdown();
}
