import { Logger } from '@nestjs/common';
import type { Request, Response } from 'express';
import { tenantOf, type CustomerPrincipal } from '../auth';
import type { ShutdownState } from '../health/shutdown.state';
import { EventDto } from './dto/events.dto';
import type { EventQuery, FeedEvent } from './event-scope';
import type { EventsService } from './events.service';

/** Events read per round while a stream catches up. */
const PAGE = 500;

/**
 * One Server-Sent Events response: the events after the cursor, then each new one when the hub
 * wakes the stream; heartbeats while quiet. Everything it holds (the hub subscription, the
 * timer, the drain listener) goes when the client disconnects or the process drains.
 */
export class EventStream {
  private readonly logger = new Logger('EventStream');
  private cursor = 0;
  private pumping: Promise<void> | null = null;
  private again = false;
  private closed = false;

  constructor(
    private readonly events: EventsService,
    private readonly shutdown: ShutdownState,
    private readonly principal: CustomerPrincipal,
    private readonly queryAfter: (cursor: number, limit: number) => EventQuery,
    private readonly heartbeatMs: number,
  ) {}

  async run(req: Request, res: Response, after: number, first: FeedEvent[]): Promise<void> {
    this.cursor = after;
    res.status(200);
    res.setHeader('Content-Type', 'text/event-stream; charset=utf-8');
    res.setHeader('Cache-Control', 'no-store');
    res.setHeader('X-Accel-Buffering', 'no');
    res.flushHeaders();
    // EventSource reconnects after this long when the stream ends.
    res.write('retry: 2000\n\n');
    this.write(res, first);

    const waiter = {
      seen: after,
      wake: (latest: number) => {
        waiter.seen = Math.max(waiter.seen, latest);
        this.pump(res);
      },
    };
    const stops: (() => void)[] = [];
    const close = (): void => {
      if (this.closed) return;
      this.closed = true;
      for (const stop of stops) stop();
      if (!res.writableEnded) res.end();
    };
    stops.push(this.events.subscribe(this.principal, waiter));
    const heartbeat = setInterval(() => res.write(': keep-alive\n\n'), this.heartbeatMs);
    stops.push(() => clearInterval(heartbeat));
    stops.push(this.shutdown.onDrain(close));
    stops.push(this.events.whileOpen(close));
    req.once('close', close);
    res.once('close', close);
    // What happened between the first read and the subscription.
    waiter.seen = await this.events.latest(tenantOf(this.principal), this.principal.branch);
    this.pump(res);
  }

  /** Reads and sends what is new; a wake during a round runs one more round. */
  private pump(res: Response): void {
    if (this.closed) return;
    if (this.pumping) {
      this.again = true;
      return;
    }
    this.pumping = (async () => {
      do {
        this.again = false;
        for (;;) {
          const page = await this.events.read(this.principal, {
            ...this.queryAfter(this.cursor, PAGE),
            checkExpiry: false,
          });
          if (this.closed) return;
          this.write(res, page);
          if (page.length < PAGE) break;
        }
      } while (this.again && !this.closed);
    })()
      .catch((error: unknown) => {
        // The client reconnects with Last-Event-ID and loses nothing.
        this.logger.warn({ err: error }, 'event stream ended by an error');
        if (!res.writableEnded) res.end();
      })
      .finally(() => {
        this.pumping = null;
      });
  }

  private write(res: Response, events: FeedEvent[]): void {
    for (const event of events) {
      const dto = EventDto.from(event);
      res.write(`id: ${dto.id}\nevent: ${dto.type}\ndata: ${JSON.stringify(dto)}\n\n`);
      this.cursor = event.seq;
    }
  }
}
