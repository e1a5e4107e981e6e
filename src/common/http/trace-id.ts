import { isSpanContextValid, trace } from '@opentelemetry/api';

/**
 * The W3C trace id of the span the calling code runs in, when tracing is on (src/tracing.ts
 * started the SDK); undefined when it is off. Off, the OpenTelemetry API is a no-op facade: no
 * span is ever active, and this costs a lookup in an empty context.
 */
export function activeTraceId(): string | undefined {
  const span = trace.getActiveSpan();
  if (!span) return undefined;
  const context = span.spanContext();
  return isSpanContextValid(context) ? context.traceId : undefined;
}
