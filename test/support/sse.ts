import { request, type ClientRequest, type IncomingMessage } from 'node:http';

export interface SseEvent {
  id?: string;
  event?: string;
  data: string;
}

/** A Server-Sent Events client over node:http: collects every event, and can wait for some. */
export class SseClient {
  /** Every event received, in order (a list of the caller's when it passes one to `open`). */
  events: SseEvent[] = [];
  /** Called once when the response is over, however it ended. */
  onEnd: () => void = () => undefined;
  comments = 0;
  status = 0;
  headers: IncomingMessage['headers'] = {};
  private buffer = '';
  private req: ClientRequest | undefined;
  private waiters: (() => void)[] = [];
  ended = false;

  static async open(
    port: number,
    path: string,
    headers: Record<string, string>,
    events?: SseEvent[],
  ): Promise<SseClient> {
    const client = new SseClient();
    if (events) client.events = events;
    await new Promise<void>((resolve, reject) => {
      client.req = request({ host: '127.0.0.1', port, path, headers, agent: false }, (res) => {
        client.status = res.statusCode ?? 0;
        client.headers = res.headers;
        res.setEncoding('utf8');
        res.on('data', (chunk: string) => client.feed(chunk));
        res.on('end', () => {
          client.ended = true;
          client.wakeAll();
        });
        // Ended or cut off (the server destroys the response of a slow reader).
        res.on('close', () => {
          client.ended = true;
          client.wakeAll();
          client.onEnd();
        });
        resolve();
      });
      client.req.on('error', (error) => (client.ended ? undefined : reject(error)));
      client.req.end();
    });
    return client;
  }

  /** Resolves once `count` events have arrived; rejects after `timeoutMs`. */
  async waitFor(count: number, timeoutMs = 5000): Promise<SseEvent[]> {
    const deadline = Date.now() + timeoutMs;
    while (this.events.length < count) {
      const left = deadline - Date.now();
      if (left <= 0 || this.ended)
        throw new Error(
          `expected ${count} events, got ${this.events.length} ` +
            (this.ended ? '(the stream ended)' : `(none more within ${timeoutMs} ms)`),
        );
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, left);
        this.waiters.push(() => {
          clearTimeout(timer);
          resolve();
        });
      });
    }
    return this.events;
  }

  close(): void {
    this.ended = true;
    this.req?.destroy();
  }

  private wakeAll(): void {
    const waiters = this.waiters;
    this.waiters = [];
    for (const wake of waiters) wake();
  }

  private feed(chunk: string): void {
    this.buffer += chunk;
    let end: number;
    while ((end = this.buffer.indexOf('\n\n')) >= 0) {
      const block = this.buffer.slice(0, end);
      this.buffer = this.buffer.slice(end + 2);
      const event: SseEvent = { data: '' };
      let hasData = false;
      for (const line of block.split('\n')) {
        if (line.startsWith(':')) this.comments += 1;
        else if (line.startsWith('id: ')) event.id = line.slice(4);
        else if (line.startsWith('event: ')) event.event = line.slice(7);
        else if (line.startsWith('data: ')) {
          event.data += line.slice(6);
          hasData = true;
        }
      }
      if (hasData) this.events.push(event);
    }
    this.wakeAll();
  }
}

/** An event of the change feed as its `data` line carries it (the members tests read). */
export interface FeedEventData {
  id: string;
  type: string;
  resource: string;
  key: string;
  data?: Record<string, unknown>;
}

/**
 * A stream read as EventSource reads it: when the stream ends, it is opened again with
 * `Last-Event-ID` (the id of the last event received) after `retryMs`, as the service's
 * `retry:` line asks; a 503 (a move pausing the feed) is tried again the same way. Every
 * event of every connection is in `events`; `ends` says when each connection ended and after
 * how many events, so a test can tell an end from a gap.
 */
export class ResumingSseReader {
  readonly events: SseEvent[] = [];
  readonly ends: { at: number; events: number; status: number }[] = [];
  private current: SseClient | undefined;
  private closed = false;
  private timer: NodeJS.Timeout | undefined;

  private constructor(
    private readonly port: number,
    private readonly path: string,
    private readonly headers: Record<string, string>,
    private readonly retryMs: number,
  ) {}

  /** Opens the stream; resolves with the first connection's status. */
  static async open(
    port: number,
    path: string,
    headers: Record<string, string>,
    retryMs = 500,
  ): Promise<ResumingSseReader> {
    const reader = new ResumingSseReader(port, path, headers, retryMs);
    await reader.connect();
    return reader;
  }

  get status(): number {
    return this.current?.status ?? 0;
  }

  close(): void {
    this.closed = true;
    clearTimeout(this.timer);
    this.current?.close();
  }

  private async connect(): Promise<void> {
    const last = this.events.at(-1)?.id;
    const headers = last === undefined ? this.headers : { ...this.headers, 'Last-Event-ID': last };
    let client: SseClient;
    try {
      client = await SseClient.open(this.port, this.path, headers, this.events);
    } catch {
      return this.again(0);
    }
    this.current = client;
    if (client.status !== 200) {
      client.close();
      return this.again(client.status);
    }
    if (client.ended) this.again(client.status);
    else client.onEnd = () => this.again(client.status);
  }

  private again(status: number): void {
    if (this.closed) return;
    this.ends.push({ at: Date.now(), events: this.events.length, status });
    this.timer = setTimeout(() => void this.connect(), this.retryMs);
  }
}
