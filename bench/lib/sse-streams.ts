import { Agent, request } from 'node:http';
import type { Target } from './servers';

/** Streams held open on the service, with the events each has received so far. */
export interface OpenStreams {
  /** Per stream, the events received (`event:` lines). */
  counts: number[];
  /** Closes every stream and the sockets they used. */
  close: () => void;
}

/**
 * Opens one `GET /events/stream?<query>` per query, ten at a time (the measure is delivery, not a
 * thundering herd of connects), counting each stream's events; `onChunk` sees what each receives.
 */
export async function openStreams(
  service: Target,
  key: string,
  queries: string[],
  onChunk: (index: number, chunk: string) => void = () => undefined,
): Promise<OpenStreams> {
  const url = new URL(service.url);
  const agent = new Agent({ keepAlive: true, maxSockets: queries.length + 1 });
  const counts = new Array<number>(queries.length).fill(0);
  const closers: (() => void)[] = [];
  const open = (i: number): Promise<void> =>
    new Promise<void>((resolve, reject) => {
      const req = request(
        {
          host: url.hostname,
          port: url.port,
          path: `/events/stream?${queries[i]}`,
          headers: { 'x-api-key': key },
          agent,
        },
        (res) => {
          if (res.statusCode !== 200) reject(new Error(`stream answered ${res.statusCode}`));
          res.setEncoding('utf8');
          res.on('data', (chunk: string) => {
            counts[i] = (counts[i] ?? 0) + (chunk.match(/^event: /gm)?.length ?? 0);
            onChunk(i, chunk);
          });
          resolve();
        },
      );
      req.on('error', (error) => (closers.length ? undefined : reject(error)));
      req.end();
      closers.push(() => req.destroy());
    });
  for (let first = 0; first < queries.length; first += 10)
    await Promise.all(counts.slice(first, first + 10).map((_, offset) => open(first + offset)));
  return {
    counts,
    close: () => {
      for (const close of closers) close();
      agent.destroy();
    },
  };
}
