import { Controller, Get, Headers, Query, Req, Res } from '@nestjs/common';
import { ApiGoneResponse, ApiHeader, ApiOkResponse, ApiTags } from '@nestjs/swagger';
import type { Request, Response } from 'express';
import { Auth, CurrentPrincipal, tenantOf, type CustomerPrincipal } from '../auth';
import { ProblemDto, ValidationFailedError } from '../common/errors';
import { ShutdownState } from '../health/shutdown.state';
import { EventDto, EventPageDto, EventsPageQueryDto, EventsQueryDto } from './dto/events.dto';
import type { EventQuery } from './event-scope';
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

const GONE = {
  type: ProblemDto,
  description: 'CURSOR_EXPIRED: the cursor is older than EVENTS_RETENTION_MS; resync',
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
   * `wait`, an empty page is held until an event arrives (or `wait` seconds pass).
   */
  @Get()
  @ApiOkResponse({ type: EventPageDto })
  @ApiGoneResponse(GONE)
  async listEvents(
    @CurrentPrincipal() principal: CustomerPrincipal,
    @Query() query: EventsPageQueryDto,
  ): Promise<EventPageDto> {
    const after = Number(query.after ?? 0);
    const q = eventQuery(query, after, Number(query.limit ?? DEFAULT_LIMIT));
    const deadline = Date.now() + Number(query.wait ?? 0) * 1000;
    for (;;) {
      // The newest event before the read: a wait then starts from what the read has covered
      // (read only when the request may wait).
      const seen =
        deadline > Date.now() ? await this.events.latest(tenantOf(principal), principal.branch) : 0;
      const events = await this.events.read(principal, q);
      const remaining = deadline - Date.now();
      if (events.length > 0 || remaining <= 0 || this.shutdown.draining)
        return {
          events: events.map((event) => EventDto.from(event)),
          next: String(events.at(-1)?.seq ?? after),
        };
      await this.waitBeyond(principal, seen, remaining);
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
    const after =
      from !== undefined
        ? Number(from)
        : await this.events.latest(tenantOf(principal), principal.branch);
    // Checked before the stream opens: an expired cursor is still a 410.
    await this.events.checkCursor(tenantOf(principal), principal.branch, after);
    new EventStream(
      this.events,
      this.shutdown,
      principal,
      eventQuery(query, 0, 0),
      this.events.heartbeatMs,
    ).run(req, res, after);
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
