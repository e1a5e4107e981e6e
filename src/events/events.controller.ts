import { Controller, Get, Headers, Query, Req, Res } from '@nestjs/common';
import {
  ApiGoneResponse,
  ApiHeader,
  ApiOkResponse,
  ApiTags,
  ApiTooManyRequestsResponse,
} from '@nestjs/swagger';
import type { Request, Response } from 'express';
import { Auth, CurrentPrincipal, type CustomerPrincipal } from '../auth';
import { ProblemDto, ValidationFailedError } from '../common/errors';
import { ShutdownState } from '../health/shutdown.state';
import { EventDto, EventPageDto, EventsPageQueryDto, EventsQueryDto } from './dto/events.dto';
import type { EventQuery, FeedEvent } from './event-scope';
import { EventsService } from './events.service';
import { EventStream } from './event-stream';

const DEFAULT_LIMIT = 100;

function eventQuery(query: EventsQueryDto, after: number, limit: number): EventQuery {
  return {
    after,
    limit,
    ...(query.collection !== undefined ? { collection: query.collection } : {}),
    ...(query.type !== undefined ? { type: query.type } : {}),
    ...(query.resource !== undefined ? { resource: query.resource } : {}),
  };
}

function page(events: FeedEvent[], after: number): EventPageDto {
  return {
    events: events.map((event) => EventDto.from(event)),
    next: String(events.at(-1)?.seq ?? after),
  };
}

const GONE = {
  type: ProblemDto,
  description: 'CURSOR_EXPIRED: the cursor is older than EVENTS_RETENTION_MS; resync',
};

const TOO_MANY = {
  type: ProblemDto,
  description:
    'RATE_LIMITED: rate limit of the key, or failed-authentication budget of the client address, exceeded (see Retry-After); TOO_MANY_STREAMS: the key holds EVENTS_MAX_STREAMS_PER_KEY streams and waiting long polls on this instance, or the instance EVENTS_MAX_STREAMS (Retry-After: 5)',
};

/** The change feed of the caller's namespace in the request branch (docs/events.md). */
@ApiTags('events')
@Controller('events')
@Auth('root', 'sub', 'team')
export class EventsController {
  constructor(
    private readonly events: EventsService,
    private readonly shutdown: ShutdownState,
  ) {}

  /**
   * A page of events after `after`, oldest first, with the cursor of the next page. With
   * `wait`, an empty page is held until an event arrives (or `wait` seconds pass); such a long
   * poll holds one of the key's stream slots while it runs.
   */
  @Get()
  @ApiOkResponse({ type: EventPageDto })
  @ApiGoneResponse(GONE)
  @ApiTooManyRequestsResponse(TOO_MANY)
  async listEvents(
    @CurrentPrincipal() principal: CustomerPrincipal,
    @Query() query: EventsPageQueryDto,
  ): Promise<EventPageDto> {
    const after = Number(query.after ?? 0);
    const q = eventQuery(query, after, Number(query.limit ?? DEFAULT_LIMIT));
    const wait = Number(query.wait ?? 0);
    if (wait === 0) return page(await this.events.read(principal, q), after);
    // Decided before any database work: a refused long poll costs nothing.
    const release = this.events.slots.take(principal.keyId);
    try {
      const deadline = Date.now() + wait * 1000;
      for (;;) {
        // The newest event before the read: a wait then starts from what the read has covered.
        const seen = await this.events.latestForStream(principal);
        const events = await this.events.readForStream(principal, q);
        const remaining = deadline - Date.now();
        if (events.length > 0 || remaining <= 0 || this.shutdown.draining)
          return page(events, after);
        await this.waitBeyond(principal, seen, remaining);
      }
    } finally {
      release();
    }
  }

  /**
   * Server-Sent Events: every event after `Last-Event-ID` (or `after`; neither: from now), then
   * each new one as it happens; a comment line every EVENTS_HEARTBEAT_MS while quiet.
   */
  @Get('stream')
  @ApiHeader({
    name: 'Last-Event-ID',
    required: false,
    description: 'Resume after this event (what EventSource sends when it reconnects)',
    schema: { type: 'string', pattern: '^(0|[1-9][0-9]{0,14})$' },
  })
  @ApiOkResponse({
    description:
      'text/event-stream: `id: <event id>`, `event: <type>`, `data: <event JSON>` per event',
    content: { 'text/event-stream': { schema: { type: 'string' } } },
  })
  @ApiGoneResponse(GONE)
  @ApiTooManyRequestsResponse(TOO_MANY)
  async streamEvents(
    @CurrentPrincipal() principal: CustomerPrincipal,
    @Query() query: EventsQueryDto,
    @Headers('last-event-id') lastEventId: string | undefined,
    @Req() req: Request,
    @Res() res: Response,
  ): Promise<void> {
    if (lastEventId !== undefined && !/^(0|[1-9][0-9]{0,14})$/.test(lastEventId))
      throw new ValidationFailedError([
        { field: 'Last-Event-ID', message: 'must be an event id (a whole number)' },
      ]);
    const from = lastEventId ?? query.after;
    // Decided before any database work: a refused stream costs nothing.
    const release = this.events.slots.take(principal.keyId);
    let after: number;
    try {
      // Checked before the stream opens: an expired cursor is still a 410.
      after = await this.events.openStream(
        principal,
        from === undefined ? undefined : Number(from),
      );
    } catch (error) {
      release();
      throw error;
    }
    new EventStream(this.events, this.shutdown, principal, eventQuery(query, 0, 0), {
      heartbeatMs: this.events.heartbeatMs,
      bufferBytes: this.events.streamBufferBytes,
      release,
      fromNow: from === undefined,
    }).run(req, res, after);
  }

  private waitBeyond(principal: CustomerPrincipal, seen: number, ms: number): Promise<void> {
    return new Promise((resolve) => {
      const stops: (() => void)[] = [];
      let settled = false;
      const done = (): void => {
        if (settled) return;
        settled = true;
        for (const stop of stops) stop();
        resolve();
      };
      const timer = setTimeout(done, ms);
      stops.push(() => clearTimeout(timer));
      stops.push(this.events.subscribe(principal, { seen, wake: done }));
      stops.push(this.shutdown.onDrain(done));
      stops.push(this.events.whileOpen(done));
    });
  }
}
