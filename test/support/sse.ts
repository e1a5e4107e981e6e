import { request, type ClientRequest, type IncomingMessage } from 'node:http';

export interface SseEvent {
  id?: string;
  event?: string;
  data: string;
}

/** A Server-Sent Events client over node:http: collects every event, and can wait for some. */
export class SseClient {
  readonly events: SseEvent[] = [];
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
  ): Promise<SseClient> {
    const client = new SseClient();
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
