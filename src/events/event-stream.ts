import { Logger } from '@nestjs/common';
import type { Request, Response } from 'express';
import type { CustomerPrincipal } from '../auth';
import type { ShutdownState } from '../health/shutdown.state';
import { EventDto } from './dto/events.dto';
import { eventMatcher, type EventQuery, type FeedEvent } from './event-scope';
import type { TailReader } from './event-tail';
import type { EventsService } from './events.service';

/**
 * One Server-Sent Events response: the events after the cursor, then each new one, taken from
 * the namespace's tail (one read of the feed per change, whatever the number of streams);
 * heartbeats while quiet. Everything it holds (its place in the tail, the timer, the drain
 * listener) goes when the client disconnects or the process drains.
 */
export class EventStream implements TailReader {
  private readonly logger = new Logger('EventStream');
  private readonly matches: (event: FeedEvent) => boolean;
  private res: Response | null = null;
  private readonly stops: (() => void)[] = [];
  private closed = false;
  scanned = 0;

  constructor(
    private readonly events: EventsService,
    private readonly shutdown: ShutdownState,
    private readonly principal: CustomerPrincipal,
    private readonly query: Omit<EventQuery, 'after' | 'limit'>,
    private readonly heartbeatMs: number,
  ) {
    this.matches = eventMatcher(principal, { ...query, after: 0, limit: 0 });
  }

  run(req: Request, res: Response, after: number): void {
    this.res = res;
    this.scanned = after;
    res.status(200);
    res.setHeader('Content-Type', 'text/event-stream; charset=utf-8');
    res.setHeader('Cache-Control', 'no-store');
    res.setHeader('X-Accel-Buffering', 'no');
    res.flushHeaders();
    // EventSource reconnects after this long when the stream ends.
    res.write('retry: 2000\n\n');

    const close = (): void => this.close();
    const stops = this.stops;
    const heartbeat = setInterval(() => res.write(': keep-alive\n\n'), this.heartbeatMs);
    stops.push(() => clearInterval(heartbeat));
    stops.push(this.shutdown.onDrain(close));
    stops.push(this.events.whileOpen(close));
    req.once('close', close);
    res.once('close', close);
    stops.push(this.events.follow(this.principal, this));
  }

  wants(event: FeedEvent): boolean {
    return this.matches(event);
  }

  readOwn(after: number, through: number, limit: number): Promise<FeedEvent[]> {
    return this.events.read(this.principal, {
      ...this.query,
      after,
      through,
      limit,
      checkExpiry: false,
    });
  }

  send(events: FeedEvent[]): void {
    const res = this.res;
    if (this.closed || !res) return;
    for (const event of events) {
      const dto = EventDto.from(event);
      res.write(`id: ${dto.id}\nevent: ${dto.type}\ndata: ${JSON.stringify(dto)}\n\n`);
    }
  }

  fail(error: unknown): void {
    // The client reconnects with Last-Event-ID and loses nothing.
    this.logger.warn({ err: error }, 'event stream ended by an error');
    this.close();
  }

  private close(): void {
    if (this.closed) return;
    this.closed = true;
    for (const stop of this.stops) stop();
    if (this.res && !this.res.writableEnded) this.res.end();
  }
}
