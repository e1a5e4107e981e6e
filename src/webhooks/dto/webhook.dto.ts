import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import {
  ArrayMaxSize,
  ArrayMinSize,
  IsArray,
  IsIn,
  IsString,
  Matches,
  MaxLength,
} from 'class-validator';
import { OptionalField } from '../../common/dto';
import { JsonObjectBody } from '../../common/http/validation';
import { EVENT_TYPES, type EventType } from '../../events/event.schema';
import type { Delivery, DeliveryAttempt, Webhook } from '../webhook.schema';

const COLLECTION = '^[A-Za-z][A-Za-z0-9_-]{0,63}$';
const SECRET = '^whsec_[A-Za-z0-9+/]+={0,2}$';

@JsonObjectBody()
export class CreateWebhookDto {
  /** An http(s) URL; loopback, private and link-local addresses are refused (WEBHOOK_ALLOW_PRIVATE). */
  @IsString()
  @MaxLength(2048)
  @Matches(/^https?:\/\//i, { message: 'url must be an http(s) URL' })
  @ApiProperty({
    example: 'https://hooks.example.com/pds',
    maxLength: 2048,
    pattern: '^[Hh][Tt][Tt][Pp][Ss]?://',
  })
  url!: string;

  /** The event types to receive. */
  @IsArray()
  @ArrayMinSize(1)
  @ArrayMaxSize(EVENT_TYPES.length)
  @IsIn(EVENT_TYPES, { each: true })
  @ApiProperty({
    type: 'array',
    items: { type: 'string', enum: [...EVENT_TYPES] },
    minItems: 1,
    maxItems: 3,
    example: ['created', 'deleted'],
  })
  events!: EventType[];

  /** Only the events of this data collection (items, and the collection itself). */
  @OptionalField()
  @IsString()
  @Matches(new RegExp(COLLECTION), { message: `collection must match ${COLLECTION}` })
  @ApiPropertyOptional({ pattern: COLLECTION, example: 'orders' })
  collection?: string;

  /** Your own signing secret (`whsec_` + base64 of 24–64 bytes); generated when absent. */
  @OptionalField()
  @IsString()
  @MaxLength(100)
  @Matches(new RegExp(SECRET), { message: 'secret must be whsec_ followed by base64' })
  @ApiPropertyOptional({ pattern: SECRET, maxLength: 100 })
  secret?: string;
}

export class WebhookDto {
  @ApiProperty({ example: '6740a1f3c2b4e5d6f7a8b9c0' })
  id!: string;

  @ApiProperty({ example: 'https://hooks.example.com/pds' })
  url!: string;

  @ApiProperty({ type: 'array', items: { type: 'string', enum: [...EVENT_TYPES] } })
  events!: EventType[];

  @ApiPropertyOptional({ example: 'orders' })
  collection?: string;

  /** Since when every attempt failed; null when the last one succeeded or none was made. */
  @ApiProperty({ type: String, format: 'date-time', nullable: true })
  failingSince!: string | null;

  /** Set after WEBHOOK_RETRY_WINDOW_MS of failures: nothing is delivered any more. */
  @ApiProperty({ type: String, format: 'date-time', nullable: true })
  disabledAt!: string | null;

  @ApiProperty({ format: 'date-time' })
  createdAt!: string;

  static from(webhook: Webhook): WebhookDto {
    return {
      id: webhook.id,
      url: webhook.url,
      events: webhook.events,
      ...(webhook.collection !== undefined ? { collection: webhook.collection } : {}),
      failingSince: webhook.failingSince?.toISOString() ?? null,
      disabledAt: webhook.disabledAt?.toISOString() ?? null,
      createdAt: webhook.createdAt.toISOString(),
    };
  }
}

export class CreatedWebhookDto {
  @ApiProperty({ type: WebhookDto })
  webhook!: WebhookDto;

  /** The signing secret. Shown once. */
  @ApiProperty({ example: 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw' })
  secret!: string;
}

export class DeliveryAttemptDto {
  @ApiProperty({ format: 'date-time' })
  at!: string;

  /** The endpoint's status; absent when it could not be reached. */
  @ApiPropertyOptional({ example: 500 })
  status?: number;

  @ApiPropertyOptional({ example: 'no answer within 5000 ms' })
  error?: string;

  @ApiProperty({ example: 42 })
  durationMs!: number;

  static from(attempt: DeliveryAttempt): DeliveryAttemptDto {
    return {
      at: attempt.at.toISOString(),
      ...(attempt.status !== undefined ? { status: attempt.status } : {}),
      ...(attempt.error !== undefined ? { error: attempt.error } : {}),
      durationMs: attempt.durationMs,
    };
  }
}

export class DeliveryDto {
  /** `webhook-id` of the POSTs: `msg_<webhook id>:<event id>`. */
  @ApiProperty({ example: 'msg_6740a1f3c2b4e5d6f7a8b9c0:1043' })
  id!: string;

  @ApiProperty({ example: '1043' })
  eventId!: string;

  @ApiProperty({ enum: ['pending', 'delivered', 'failed'] })
  status!: string;

  @ApiProperty({ type: [DeliveryAttemptDto] })
  attempts!: DeliveryAttemptDto[];

  /** When the next attempt is due (pending deliveries). */
  @ApiProperty({ format: 'date-time' })
  nextAttemptAt!: string;

  @ApiProperty({ format: 'date-time' })
  createdAt!: string;

  static from(delivery: Delivery): DeliveryDto {
    return {
      id: `msg_${delivery.id}`,
      eventId: delivery.eventId,
      status: delivery.status,
      attempts: delivery.attempts.map((a) => DeliveryAttemptDto.from(a)),
      nextAttemptAt: delivery.nextAttemptAt.toISOString(),
      createdAt: delivery.createdAt.toISOString(),
    };
  }
}
