// The built service (dist/main.js) with tracing on and an in-memory span exporter, in a process
// of its own: the instrumentations patch http, express and mongodb as they load, which cannot
// happen inside jest (it loads modules itself). Started by test/e2e/tracing.e2e-spec.ts through
// ts-node, configured by the environment like `node dist/main.js`; it answers the message
// 'spans' on its IPC channel with every span finished so far.
import { InMemorySpanExporter, SimpleSpanProcessor } from '@opentelemetry/sdk-trace-base';
import { join, resolve } from 'node:path';

const DIST = join(resolve(__dirname, '..', '..'), 'dist');

/** What the test reads of a span. */
export interface ReportedSpan {
  traceId: string;
  spanId: string;
  parentSpanId?: string;
  name: string;
  /** SpanKind: 0 internal, 1 server, 2 client. */
  kind: number;
  scope: string;
  attributes: Record<string, unknown>;
}

const exporter = new InMemorySpanExporter();

/* eslint-disable @typescript-eslint/no-require-imports -- the build is loaded by path, after the SDK started */
const { startTracing } = require(
  join(DIST, 'tracing-sdk.js'),
) as typeof import('../../src/tracing-sdk');
startTracing({ spanProcessors: [new SimpleSpanProcessor(exporter)] });
const { bootstrap } = require(join(DIST, 'main.js')) as typeof import('../../src/main');
/* eslint-enable @typescript-eslint/no-require-imports */

process.on('message', (message) => {
  if (message !== 'spans') return;
  const spans: ReportedSpan[] = exporter.getFinishedSpans().map((span) => ({
    traceId: span.spanContext().traceId,
    spanId: span.spanContext().spanId,
    parentSpanId: span.parentSpanContext?.spanId,
    name: span.name,
    kind: span.kind,
    scope: span.instrumentationScope.name,
    attributes: { ...span.attributes },
  }));
  process.send?.(spans);
});

void bootstrap();
