import {
  applyDecorators,
  Controller,
  Get,
  Headers,
  Query,
  Req,
  Res,
  UseInterceptors,
} from '@nestjs/common';
import {
  ApiBadRequestResponse,
  ApiGoneResponse,
  ApiHeader,
  ApiOkResponse,
  ApiTags,
  ApiTooManyRequestsResponse,
} from '@nestjs/swagger';
import type { Request, Response } from 'express';
import {
  Auth,
  checkCollectionAccess,
  CurrentPrincipal,
  grantOf,
  PrincipalRights,
  rightsLossError,
  type CustomerPrincipal,
  type RightsWatch,
  NeedsScope,
} from '../auth';
import { hasScope } from '../auth/access-grant';
import { InsufficientScopeError } from '../auth/auth.errors';
import { ProblemDto, ValidationFailedError } from '../common/errors';
import { ShutdownState } from '../health/shutdown.state';
import { MeteredAs } from '../usage';
import { EventDto, EventPageDto, EventsPageQueryDto, EventsQueryDto } from './dto/events.dto';
import { LiveQueryParams } from './dto/live-query.openapi';
import type { EventQuery, FeedEvent } from './event-scope';
import type { EventType } from './event.schema';
import { EventsService } from './events.service';
import { EventStream } from './event-stream';
import { eventView, type LiveEvent } from './live-query';
import type { EventAccess } from './event-access';
import { LiveParams, LiveQueryParamsInterceptor } from './live-query.params';

const DEFAULT_LIMIT = 100;

/** The page of the events read after `after`: `next` is the last one read, sent or not. */
function page(
  events: FeedEvent[],
  after: number,
  view: (event: FeedEvent) => LiveEvent | null,
): EventPageDto {
  return {
    events: events.flatMap((event) => {
      const seen = view(event);
      return seen ? [EventDto.seen(seen)] : [];
    }),
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
    'RATE_LIMITED: rate limit of the key, or failed-authentication budget of the client address, exceeded (see Retry-After); TOO_MANY_STREAMS: the key holds its streams and waiting long polls over all instances (the plan’s streamsPerKey, else EVENTS_MAX_STREAMS_PER_KEY; a publishable key EVENTS_MAX_STREAMS_PER_PUBLISHABLE_KEY), or the instance EVENTS_MAX_STREAMS (Retry-After: 5)',
};

/** What both reads of the feed take (a live query) and refuse (a wrong parameter, an old cursor, too many). */
const FEED_READ = applyDecorators(
  LiveQueryParams(),
  ApiBadRequestResponse({
    type: ProblemDto,
    description:
      "A parameter or the filter is wrong; PROTECTED_FIELD: a live query's filter or fields name a protected field of the caller's",
  }),
  ApiGoneResponse(GONE),
  ApiTooManyRequestsResponse(TOO_MANY),
);

/** The change feed of the caller's namespace in the request branch (docs/events.md). */
@ApiTags('events')
@Controller('events')
@NeedsScope('events:read')
@Auth('root', 'sub', 'team', 'publishable')
@UseInterceptors(LiveQueryParamsInterceptor)
export class EventsController {
  constructor(
    private readonly events: EventsService,
    private readonly shutdown: ShutdownState,
    /** Not the service's: PrincipalRights reaches the modules that EventsService serves. */
    private readonly rights: PrincipalRights,
  ) {}

  /**
   * A page of events after `after`, oldest first, with the cursor of the next page. `limit`
   * bounds the events read: those a live query or the caller's access rules skip are passed
   * over, so a page may hold fewer while `next` moves on. With
   * `wait`, an empty page is held until an event arrives (or `wait` seconds pass); such a long
   * poll holds one of the key's stream slots while it runs, and ends with 401 (key revoked or
   * expired) or 403 (team membership ended) within STREAM_RIGHTS_CHECK_MS of such a loss;
   * nothing written after it is answered.
   */
  @Get()
  // A long poll is metered as a stream, for as long as it waits; a page is a read.
  @MeteredAs((req) => (Number(req.query.wait ?? 0) > 0 ? 'stream' : 'read'))
  @ApiOkResponse({ type: EventPageDto })
  @FEED_READ
  async listEvents(
    @CurrentPrincipal() principal: CustomerPrincipal,
    @Query() dto: EventsPageQueryDto,
    @LiveParams() live: Record<string, unknown>,
  ): Promise<EventPageDto> {
    const access = this.events.accessFor(principal, dto.collection);
    const query = await this.feedQuery(principal, dto, live, access);
    let after = Number(dto.after ?? 0);
    const limit = Number(dto.limit ?? DEFAULT_LIMIT);
    const view = eventView(principal, query, access);
    const wait = Number(dto.wait ?? 0);
    if (wait === 0)
      return page(
        await this.events.read(principal, { ...query, after, limit }, access),
        after,
        view,
      );
    // Before any other work: a refused long poll costs one read of the key's slots.
    let onLost = (): void => undefined;
    // A slot taken away (its lease ran out unrenewed) ends the wait with what it has.
    let slotLost = false;
    const release = await this.events.takeStreamSlot(principal, () => {
      slotLost = true;
      onLost();
    });
    // Its rights are followed while it waits: a loss ends the wait with 401/403.
    const rights = this.rights.watch(principal, () => onLost());
    try {
      const deadline = Date.now() + wait * 1000;
      for (;;) {
        if (rights.lost) throw rightsLossError(rights.lost);
        // The newest event before the read: a wait then starts from what the read has covered.
        const seen = await this.events.latestForStream(principal);
        const events = await this.events.readForStream(
          principal,
          { ...query, after, limit },
          access,
        );
        const answer = page(events, after, view);
        const remaining = deadline - Date.now();
        if (answer.events.length > 0) {
          // What was read goes out only if the principal held its rights after the read.
          const loss = await rights.confirm();
          if (loss) throw rightsLossError(loss);
          return answer;
        }
        if (remaining <= 0 || this.shutdown.draining || slotLost) return answer;
        // A live query, or the access rules, judged every event read not its own: it goes on
        // after them.
        after = Number(answer.next);
        if (events.length === 0)
          await this.waitBeyond(principal, seen, remaining, rights, (wake) => (onLost = wake));
      }
    } finally {
      rights.stop();
      release();
    }
  }

  /**
   * Server-Sent Events: every event after `Last-Event-ID` (or `after`; neither: from now), then
   * each new one as it happens; a comment line every EVENTS_HEARTBEAT_MS while quiet. A stream
   * whose principal loses its rights ends with an `end` event naming why (docs/events.md).
   */
  @Get('stream')
  @MeteredAs('stream')
  @ApiHeader({
    name: 'Last-Event-ID',
    required: false,
    description: 'Resume after this event (what EventSource sends when it reconnects)',
    schema: { type: 'string', pattern: '^(0|[1-9][0-9]{0,14})$' },
  })
  @ApiOkResponse({
    description:
      'text/event-stream: `id: <event id>`, `event: <type>`, `data: <event JSON>` per event. When the key is revoked or expires, or (X-Team) the team membership ends — a deleted sub profile or an erased account revokes its keys — the stream ends within STREAM_RIGHTS_CHECK_MS (3 s by default) with a last `event: end`, `data: {"reason": "KEY_REVOKED" | "KEY_EXPIRED" | "TEAM_MEMBERSHIP_ENDED", "detail": "…"}`, then closes; nothing written after the loss is sent',
    content: { 'text/event-stream': { schema: { type: 'string' } } },
  })
  @FEED_READ
  async streamEvents(
    @CurrentPrincipal() principal: CustomerPrincipal,
    @Query() dto: EventsQueryDto,
    @LiveParams() live: Record<string, unknown>,
    @Headers('last-event-id') lastEventId: string | undefined,
    @Req() req: Request,
    @Res() res: Response,
  ): Promise<void> {
    const query = await this.feedQuery(
      principal,
      dto,
      live,
      this.events.accessFor(principal, dto.collection),
    );
    if (lastEventId !== undefined && !/^(0|[1-9][0-9]{0,14})$/.test(lastEventId))
      throw new ValidationFailedError([
        { field: 'Last-Event-ID', message: 'must be an event id (a whole number)' },
      ]);
    const from = lastEventId ?? dto.after;
    // Before any other work: a refused stream costs one read of the key's slots.
    let slotLost = (): void => undefined;
    const release = await this.events.takeStreamSlot(principal, () => slotLost());
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
    const stream = new EventStream(this.events, this.shutdown, principal, query, {
      heartbeatMs: this.events.heartbeatMs,
      bufferBytes: this.events.streamBufferBytes,
      release,
      fromNow: from === undefined,
      watchRights: (who, onLost) => this.rights.watch(who, onLost),
    });
    // The client resumes with Last-Event-ID, and its open is counted again.
    slotLost = () => stream.fail(new Error('the stream slot was lost'));
    stream.run(req, res, after);
  }

  /**
   * The feed's query: its parameters (the DTO) and a live query's `filter[…]` and `fields`,
   * read by the data module's query language; a live query follows one collection. A key
   * limited to collections gets no event of the others (visibleTo).
   */
  private async feedQuery(
    principal: CustomerPrincipal,
    dto: EventsQueryDto,
    liveParams: Record<string, unknown>,
    access: EventAccess | null,
  ): Promise<Omit<EventQuery, 'after' | 'limit'>> {
    // A collection the key does not reach is refused (its events are never sent either way).
    if (dto.collection !== undefined) checkCollectionAccess(principal, dto.collection, 'read');
    const isLive = Object.keys(liveParams).length > 0;
    // A live query answers with items: it reads what data:read reads.
    if (isLive && !hasScope(grantOf(principal), 'data:read'))
      throw new InsufficientScopeError('data:read', 'A live query (filter[…], fields)');
    const errors: { field: string; message: string }[] = [];
    if (isLive && dto.collection === undefined)
      errors.push({
        field: 'collection',
        message: 'is required with filter[…] and fields: a live query follows one collection',
      });
    if (
      isLive &&
      dto.resource !== undefined &&
      dto.resource !== 'item' &&
      dto.resource !== 'collection'
    )
      errors.push({ field: 'resource', message: 'must be item or collection with filter[…]' });
    if (!isLive && (dto.type === 'entered' || dto.type === 'left'))
      errors.push({ field: 'type', message: `'${dto.type}' is a live query's: add filter[…]` });
    if (errors.length > 0) throw new ValidationFailedError(errors);
    const filter = isLive ? this.events.liveFilter(liveParams) : undefined;
    // A live query's filter and fields may not name a protected field (an oracle of its value).
    if (filter && access && dto.collection !== undefined)
      await access.refuseProtected(dto.collection, filter.named);
    return {
      ...(dto.collection !== undefined ? { collection: dto.collection } : {}),
      ...(dto.type !== undefined && !filter ? { type: dto.type as EventType } : {}),
      ...(dto.resource !== undefined ? { resource: dto.resource } : {}),
      ...(filter
        ? { live: { filter, ...(dto.type !== undefined ? { type: dto.type } : {}) } }
        : {}),
    };
  }

  private waitBeyond(
    principal: CustomerPrincipal,
    seen: number,
    ms: number,
    rights: RightsWatch,
    onLost: (wake: () => void) => void,
  ): Promise<void> {
    return new Promise((resolve) => {
      const stops: (() => void)[] = [];
      let settled = false;
      const done = (): void => {
        if (settled) return;
        settled = true;
        for (const stop of stops) stop();
        resolve();
      };
      if (rights.lost) return done();
      onLost(done);
      stops.push(() => onLost(() => undefined));
      const timer = setTimeout(done, ms);
      stops.push(() => clearTimeout(timer));
      stops.push(this.events.subscribe(principal, { seen, wake: done }));
      stops.push(this.shutdown.onDrain(done));
      stops.push(this.events.whileOpen(done));
    });
  }
}
