import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { IsIn, IsString, Matches } from 'class-validator';
import { OptionalField } from '../../common/dto';
import {
  EVENT_ACTOR_KINDS,
  EVENT_RESOURCES,
  LIVE_EVENT_TYPES,
  type EventResource,
  type LiveEventType,
} from '../event.schema';
import type { FeedEvent } from '../event-scope';
import type { LiveEvent } from '../live-query';

const COUNT = /^(0|[1-9][0-9]{0,14})$/;
const COLLECTION = '^[A-Za-z][A-Za-z0-9_-]{0,63}$';

/** GET /events and GET /events/stream: which events, from where. */
export class EventsQueryDto {
  /** The cursor: events after this one (`next` of the previous page, or an event's `id`). */
  @OptionalField()
  @IsString()
  @Matches(COUNT, { message: 'after must be an event id (a whole number)' })
  @ApiPropertyOptional({ type: String, pattern: COUNT.source, example: '1042' })
  after?: string;

  /** Only the events of this data collection (items, and the collection itself). */
  @OptionalField()
  @IsString()
  @Matches(new RegExp(COLLECTION), { message: `collection must match ${COLLECTION}` })
  @ApiPropertyOptional({ pattern: COLLECTION, example: 'orders' })
  collection?: string;

  /** Only events of this type (`entered` and `left`: a live query's, with `filter[…]`). */
  @OptionalField()
  @IsIn(LIVE_EVENT_TYPES)
  @ApiPropertyOptional({ enum: LIVE_EVENT_TYPES })
  type?: LiveEventType;

  @OptionalField()
  @IsIn(EVENT_RESOURCES)
  @ApiPropertyOptional({ enum: EVENT_RESOURCES })
  resource?: EventResource;
}

export class EventsPageQueryDto extends EventsQueryDto {
  @OptionalField()
  @IsString()
  @Matches(/^([1-9][0-9]?|[1-4][0-9]{2}|500)$/, { message: 'limit must be 1 to 500' })
  @ApiPropertyOptional({
    type: String,
    pattern: '^([1-9][0-9]?|[1-4][0-9]{2}|500)$',
    default: '100',
  })
  limit?: string;

  /** Long poll: with no event to answer, wait up to this many seconds (0–30) for one. */
  @OptionalField()
  @IsString()
  @Matches(/^([0-9]|[12][0-9]|30)$/, { message: 'wait must be 0 to 30 (seconds)' })
  @ApiPropertyOptional({ type: String, pattern: '^([0-9]|[12][0-9]|30)$', default: '0' })
  wait?: string;
}

export class EventActorDto {
  /** `system`: the service itself (`id` names the work: `expiry` deletes expired items). */
  @ApiProperty({ enum: EVENT_ACTOR_KINDS })
  kind!: string;

  /**
   * The subject, accountId or team id (a member's subject when it acted with X-Team); for
   * `system`, the work.
   */
  @ApiProperty({ example: 'auth0|ada' })
  id!: string;
}

export class EventDto {
  /** Ordered within the namespace (tenant and branch): the cursor of `after` and Last-Event-ID. */
  @ApiProperty({ example: '1043' })
  id!: string;

  /**
   * What happened. `entered` and `left` come only from a live query (a feed with `filter[…]`):
   * the item started or stopped matching its filter.
   */
  @ApiProperty({ enum: LIVE_EVENT_TYPES })
  type!: LiveEventType;

  @ApiProperty({ enum: EVENT_RESOURCES })
  resource!: EventResource;

  @ApiPropertyOptional({ example: 'orders' })
  collection?: string;

  /** The item's `_id`, the project's or profile's id, or the collection's name. */
  @ApiProperty({ example: '6740a1f3c2b4e5d6f7a8b9c0' })
  key!: string;

  @ApiProperty({ example: '' })
  branch!: string;

  @ApiProperty({ format: 'date-time' })
  at!: string;

  @ApiProperty({ type: EventActorDto })
  actor!: EventActorDto;

  /**
   * The resource after the change (as GET answers it; a live query's item projected by its
   * `fields`), without the caller's protected fields; absent for deletions, on a `left` or
   * `updated` of an item the caller may not read any more (another owner's, outside the read
   * rule), and
   * when the key or token lacks the read scope of the resource (items and collections
   * `data:read`, profiles `profile:read`, projects `projects:read`, files `files:read`).
   */
  @ApiPropertyOptional({ type: 'object', additionalProperties: true })
  data?: Record<string, unknown>;

  static from(event: FeedEvent): EventDto {
    return EventDto.seen({ event, type: event.type, data: event.data });
  }

  /** An event as a reader sees it (a live query's type and projection). */
  static seen({ event, type, data }: LiveEvent): EventDto {
    return {
      id: String(event.seq),
      type,
      resource: event.resource,
      ...(event.collection !== undefined ? { collection: event.collection } : {}),
      key: event.key,
      branch: event.branch,
      at: event.at.toISOString(),
      actor: event.actor,
      ...(data !== null ? { data } : {}),
    };
  }
}

export class EventPageDto {
  @ApiProperty({ type: [EventDto] })
  events!: EventDto[];

  /** The cursor for the next page: `after=<next>`. */
  @ApiProperty({ example: '1043' })
  next!: string;
}
