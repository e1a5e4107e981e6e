import type { components, operations } from './schema.js';
import {
  ApiProblemError,
  apiHeaders,
  baseUrlOf,
  problemErrorOf,
  serializeQuery,
  type ApiClientOptions,
} from './http.js';

/** One change of the feed, as `data` of a stream message carries it. */
export type ChangeEvent = components['schemas']['EventDto'];

/** The query of `GET /events/stream`: filters, and a live query's `filter[…]` and `fields`. */
export type EventStreamQuery = NonNullable<operations['streamEvents']['parameters']['query']>;

/** One message of a `text/event-stream` body. */
export interface StreamMessage {
  /** The `id:` field (the last one seen when the message has none), '' before any. */
  id: string;
  /** The `event:` field, `message` when absent. */
  event: string;
  /** The `data:` lines, joined with newlines. */
  data: string;
}

export interface StreamEventsOptions extends ApiClientOptions {
  /** Ends the stream: no further reconnect, and `streamEvents` resolves. */
  signal?: AbortSignal;
  /** Resume after this event id (sent as `Last-Event-ID`). */
  lastEventId?: string;
  /** The first reconnect delay, unless the server sends `retry:` (default 1 s). */
  retryMs?: number;
  /** The longest delay the backoff grows to (default 30 s). */
  maxRetryMs?: number;
  /** The connection is up: the service answered 200 with a stream. */
  onOpen?: () => void;
  /** The connection dropped (or a transient 429/5xx): the next attempt follows after `delayMs`. */
  onRetry?: (reason: unknown, delayMs: number) => void;
  /** A comment line: the server's keep-alive. */
  onHeartbeat?: () => void;
}

/** Statuses worth trying again: too many streams, and the service or a proxy being unavailable. */
const TRANSIENT = new Set([429, 502, 503, 504]);

/**
 * Follows `GET /events/stream` with the key in a header (a browser's EventSource cannot send
 * one): parses the event stream, hands every message to `onEvent`, and after a dropped
 * connection reconnects with `Last-Event-ID` and a growing delay, so no event is missed or seen
 * twice. Resolves when `signal` aborts; rejects with ApiProblemError when the service refuses
 * the stream (400, 401, 403, 410 …), or with the error `onEvent` threw.
 */
export async function streamEvents(
  options: StreamEventsOptions,
  query: EventStreamQuery,
  onEvent: (message: StreamMessage) => void,
): Promise<void> {
  const { signal } = options;
  const search = serializeQuery(query);
  const url = `${baseUrlOf(options)}/events/stream${search === '' ? '' : `?${search}`}`;
  const state = { lastEventId: options.lastEventId ?? '', retryMs: options.retryMs ?? 1000 };
  const maxRetryMs = options.maxRetryMs ?? 30_000;
  // Attempts since the last open: the delay doubles with each, from the server's `retry:`.
  let failures = 0;
  while (!signal?.aborted) {
    let reason: unknown;
    let waitMs = 0;
    try {
      const response = await open(options, url, state.lastEventId);
      if (response.ok && response.body) {
        options.onOpen?.();
        failures = 0;
        await readStream(response.body, state, onEvent, options.onHeartbeat);
        reason = new Error('the event stream ended');
      } else if (TRANSIENT.has(response.status)) {
        reason = await problemErrorOf(response);
        waitMs = retryAfterMs(response) ?? 0;
      } else {
        throw await problemErrorOf(response);
      }
    } catch (error) {
      if (signal?.aborted) return;
      if (error instanceof ApiProblemError || error instanceof ConsumerError)
        throw unwrapped(error);
      reason = error;
    }
    if (signal?.aborted) return;
    const delay = Math.max(waitMs, Math.min(state.retryMs * 2 ** failures, maxRetryMs));
    failures += 1;
    options.onRetry?.(reason, delay);
    await pause(delay, signal);
  }
}

/** Whether a stream message carries a change event, and that event. */
export function parseChangeEvent(message: StreamMessage): ChangeEvent | undefined {
  let value: unknown;
  try {
    value = JSON.parse(message.data);
  } catch {
    return undefined;
  }
  return typeof value === 'object' && value !== null && isChangeEvent(value) ? value : undefined;
}

function isChangeEvent(value: object): value is ChangeEvent {
  const fields: Record<string, unknown> = { ...value };
  return (
    typeof fields.id === 'string' &&
    typeof fields.type === 'string' &&
    typeof fields.resource === 'string' &&
    typeof fields.at === 'string'
  );
}

/** An error thrown by the caller's `onEvent`: it ends the stream as it is. */
class ConsumerError extends Error {
  constructor(readonly inner: unknown) {
    super('onEvent failed');
  }
}

function unwrapped(error: unknown): unknown {
  return error instanceof ConsumerError ? error.inner : error;
}

async function open(
  options: StreamEventsOptions,
  url: string,
  lastEventId: string,
): Promise<Response> {
  const headers: Record<string, string> = {
    ...apiHeaders(options),
    Accept: 'text/event-stream',
    'Cache-Control': 'no-cache',
  };
  if (lastEventId !== '') headers['Last-Event-ID'] = lastEventId;
  const init: RequestInit = { headers };
  if (options.signal) init.signal = options.signal;
  const request = new Request(url, init);
  return options.fetch ? options.fetch(request) : fetch(request);
}

function retryAfterMs(response: Response): number | undefined {
  const seconds = Number(response.headers.get('Retry-After'));
  return Number.isFinite(seconds) && seconds > 0 ? seconds * 1000 : undefined;
}

function pause(ms: number, signal: AbortSignal | undefined): Promise<void> {
  return new Promise((resolve) => {
    if (signal?.aborted) return resolve();
    const done = () => {
      clearTimeout(timer);
      signal?.removeEventListener('abort', done);
      resolve();
    };
    const timer = setTimeout(done, ms);
    signal?.addEventListener('abort', done);
  });
}

/**
 * Reads a `text/event-stream` body to its end (WHATWG HTML, "Server-sent events"): lines end with
 * CR, LF or CRLF; `data` lines accumulate, `id` and `event` apply to the message a blank line
 * ends, `retry` sets the reconnect delay, a line starting with `:` is a comment.
 */
async function readStream(
  body: ReadableStream<Uint8Array>,
  state: { lastEventId: string; retryMs: number },
  onEvent: (message: StreamMessage) => void,
  onHeartbeat: (() => void) | undefined,
): Promise<void> {
  const reader = body.getReader();
  const decoder = new TextDecoder();
  let buffer = '';
  let data: string[] = [];
  let event = '';
  const line = (text: string) => {
    if (text === '') {
      if (data.length > 0) {
        const message = { id: state.lastEventId, event: event || 'message', data: data.join('\n') };
        try {
          onEvent(message);
        } catch (error) {
          throw new ConsumerError(error);
        }
      }
      data = [];
      event = '';
      return;
    }
    if (text.startsWith(':')) return onHeartbeat?.();
    const colon = text.indexOf(':');
    const name = colon === -1 ? text : text.slice(0, colon);
    let value = colon === -1 ? '' : text.slice(colon + 1);
    if (value.startsWith(' ')) value = value.slice(1);
    if (name === 'data') data.push(value);
    else if (name === 'event') event = value;
    else if (name === 'id' && !value.includes('\0')) state.lastEventId = value;
    else if (name === 'retry' && /^\d+$/.test(value)) state.retryMs = Number(value);
  };
  try {
    for (;;) {
      const { done, value } = await reader.read();
      buffer += done ? decoder.decode() : decoder.decode(value, { stream: true });
      let end = /\r\n|\r|\n/.exec(buffer);
      // A lone CR at the end of the buffer may be the first half of a CRLF: wait for more.
      while (end && !(end[0] === '\r' && end.index === buffer.length - 1 && !done)) {
        line(buffer.slice(0, end.index));
        buffer = buffer.slice(end.index + end[0].length);
        end = /\r\n|\r|\n/.exec(buffer);
      }
      if (done) return;
    }
  } finally {
    reader.releaseLock();
  }
}
