import { Logger } from '@nestjs/common';
import type { Request, Response } from 'express';
import type { CustomerPrincipal, RightsLoss, RightsWatch } from '../auth';
import type { ShutdownState } from '../health/shutdown.state';
import { EventDto } from './dto/events.dto';
import { eventMatcher, type EventQuery, type FeedEvent } from './event-scope';
import type { TailReader } from './namespace-tail';
import type { EventsService } from './events.service';
import { eventView, type LiveEvent } from './live-query';
import type { EventAccess } from './event-access';

/** What chunked transfer encoding adds to a write (its size line and the CRLF after it). */
const CHUNK_FRAMING = 16;

export interface StreamOptions {
  heartbeatMs: number;
  /** EVENTS_STREAM_BUFFER_BYTES: unsent bytes the stream may hold before it is closed. */
  bufferBytes: number;
  /** Gives back the stream's slot (called once, when the stream ends). */
  release: () => void;
  /** Opened without a cursor: it starts where the feed stood at the open. */
  fromNow: boolean;
  /** Follows the principal's rights while the stream is open (PrincipalRights.watch). */
  watchRights: (principal: CustomerPrincipal, onLost: (loss: RightsLoss) => void) => RightsWatch;
}

/**
 * One Server-Sent Events response: the events after the cursor, then each new one, taken from
 * the namespace's tail (one read of the feed per change, whatever the number of streams);
 * heartbeats while quiet. Everything it holds (its place in the tail, the timer, the drain
 * listener, its slot) goes when the client disconnects, the process drains, or the client reads
 * too slowly.
 *
 * What it holds unsent is what the response has not handed to the kernel yet
 * (`res.writableLength`; it queues nothing itself). A message that would take that beyond
 * `bufferBytes` is not written: an event of the shared read closes the stream (its client fell
 * that far behind; it resumes with Last-Event-ID), while the stream's own catch-up pauses until
 * its client has read what it holds. A stream paused for a whole heartbeat interval is closed too.
 */
export class EventStream implements TailReader {
  private readonly logger = new Logger('EventStream');
  private matches: (event: FeedEvent) => boolean;
  /** The collections the database selects by collection for it (see EventAccess). */
  private wider: readonly string[] = [];
  /** How its principal's access rules judge item events (null: not limited by them). */
  private readonly access: EventAccess | null;
  /** How it sees an event it selected (a live query judges it): null, not sent. */
  private readonly view: (event: FeedEvent) => LiveEvent | null;
  private res: Response | null = null;
  private readonly stops: (() => void)[] = [];
  private closed = false;
  private wakeTail: () => void = () => undefined;
  private rights: RightsWatch | null = null;
  /** Heartbeats that found the stream paused in a row. */
  private pausedBeats = 0;
  scanned = 0;
  paused = false;

  constructor(
    private readonly events: EventsService,
    private readonly shutdown: ShutdownState,
    private readonly principal: CustomerPrincipal,
    private readonly query: Omit<EventQuery, 'after' | 'limit'>,
    private readonly options: StreamOptions,
  ) {
    this.access = events.accessFor(principal, query.collection);
    this.matches = eventMatcher(principal, { ...query, after: 0, limit: 0 });
    this.view = eventView(principal, query, this.access);
  }

  run(req: Request, res: Response, after: number): void {
    this.res = res;
    this.scanned = after;
    const stops = this.stops;
    stops.push(this.options.release);
    res.status(200);
    res.setHeader('Content-Type', 'text/event-stream; charset=utf-8');
    res.setHeader('Cache-Control', 'no-store');
    res.setHeader('X-Accel-Buffering', 'no');
    res.flushHeaders();
    // EventSource reconnects after this long when the stream ends.
    res.write('retry: 2000\n\n');

    const close = (): void => this.close();
    const heartbeat = setInterval(() => this.beat(), this.options.heartbeatMs);
    stops.push(() => clearInterval(heartbeat));
    stops.push(this.shutdown.onDrain(close));
    stops.push(this.events.whileOpen(close));
    req.once('close', close);
    res.once('close', close);
    const onDrain = (): void => this.resume();
    res.on('drain', onDrain);
    stops.push(() => res.off('drain', onDrain));
    const rights = this.options.watchRights(this.principal, (loss) => this.end(loss));
    this.rights = rights;
    stops.push(() => rights.stop());
    const following = this.events.follow(this.principal, this, this.options.fromNow);
    this.wakeTail = following.wake;
    stops.push(following.stop);
  }

  /**
   * Loads the access rules of the events' collections (and which collections are judged in
   * memory) before they are judged: a changed rule reaches the stream within REGISTRY_CACHE_MS.
   * A failure ends the stream (the client resumes with Last-Event-ID).
   */
  async prepare(events: readonly FeedEvent[]): Promise<void> {
    const access = this.access;
    if (!access || this.closed) return;
    try {
      await access.prepareRead();
      await access.prepare(events);
      this.judgeWith(access.wider);
    } catch (error) {
      this.fail(error);
    }
  }

  private judgeWith(wider: readonly string[]): void {
    if (wider.length === this.wider.length && wider.every((name, i) => name === this.wider[i]))
      return;
    this.wider = wider;
    this.matches = eventMatcher(this.principal, { ...this.query, after: 0, limit: 0 }, wider);
  }

  wants(event: FeedEvent): boolean {
    return !this.closed && this.matches(event);
  }

  async readOwn(after: number, through: number, limit: number): Promise<FeedEvent[]> {
    const events = await this.events.readForStream(
      this.principal,
      { ...this.query, after, through, limit, checkExpiry: false },
      this.access,
    );
    if (this.access) this.judgeWith(this.access.wider);
    return events;
  }

  async confirm(): Promise<void> {
    if (this.closed || !this.rights) return;
    try {
      const loss = await this.rights.confirm();
      if (loss) this.end(loss);
    } catch (error) {
      // Not known to hold its rights: nothing more is sent (the client reconnects).
      this.fail(error);
    }
  }

  send(events: FeedEvent[]): void {
    for (const event of events) {
      if (this.closed) return;
      const seen = this.view(event);
      if (seen && !this.write(message(seen))) return this.cutOff();
    }
  }

  sendOwn(events: FeedEvent[]): number {
    for (const [taken, event] of events.entries()) {
      if (this.closed) return taken;
      const seen = this.view(event);
      if (seen && !this.write(message(seen))) {
        this.paused = true;
        return taken;
      }
    }
    return events.length;
  }

  fail(error: unknown): void {
    // The client reconnects with Last-Event-ID and loses nothing.
    this.logger.warn({ err: error }, 'event stream ended by an error');
    this.close();
  }

  /**
   * Writes `text` unless the response already holds unsent bytes and it would then hold more
   * than the limit. A message on an empty buffer always goes, so an event larger than the limit
   * is still delivered (alone).
   */
  private write(text: string): boolean {
    const res = this.res;
    if (this.closed || !res) return false;
    const held = res.writableLength;
    if (held > 0 && held + Buffer.byteLength(text) + CHUNK_FRAMING > this.options.bufferBytes)
      return false;
    res.write(text);
    return true;
  }

  private beat(): void {
    if (this.paused) {
      this.pausedBeats += 1;
      if (this.pausedBeats > 1) this.cutOff();
      return;
    }
    if (!this.write(': keep-alive\n\n')) this.cutOff();
  }

  /** The client read what the stream held: a paused catch-up goes on. */
  private resume(): void {
    if (!this.paused || this.closed) return;
    this.paused = false;
    this.pausedBeats = 0;
    this.wakeTail();
  }

  /**
   * Its principal lost its rights: a final `end` event naming why (written whatever the stream
   * holds unsent), then the stream closes. EventSource reconnects, and that request is refused.
   */
  private end(loss: RightsLoss): void {
    if (this.closed) return;
    this.logger.log({ reason: loss.reason }, 'event stream ended: its principal lost its rights');
    this.res?.write(endMessage(loss));
    this.close();
  }

  /** Lets a slow reader go: what it holds is dropped at once, not flushed. */
  private cutOff(): void {
    if (this.closed) return;
    this.logger.log(
      { held: this.res?.writableLength, limit: this.options.bufferBytes },
      'event stream closed: its client reads too slowly',
    );
    this.res?.destroy();
    this.close();
  }

  private close(): void {
    if (this.closed) return;
    this.closed = true;
    for (const stop of this.stops) stop();
    if (this.res && !this.res.writableEnded && !this.res.destroyed) this.res.end();
  }
}

/** The last message of a stream whose principal lost its rights (docs/events.md). */
export function endMessage(loss: RightsLoss): string {
  return `event: end\ndata: ${JSON.stringify({ reason: loss.reason, detail: loss.detail })}\n\n`;
}

function message(event: LiveEvent): string {
  const dto = EventDto.seen(event);
  return `id: ${dto.id}\nevent: ${dto.type}\ndata: ${JSON.stringify(dto)}\n\n`;
}
