import { Transform, Type } from 'class-transformer';
import { IsInt, Max, Min } from 'class-validator';

/** The change feed: what is recorded, for how long, and how readers are served (docs/events.md). */
export class EventsVariables {
  /** Record a change feed (GET /events, webhooks); off: writes cost no feed commands. */
  @Transform(
    ({ value }: { value: unknown }) => value !== false && value !== 'false' && value !== '0',
  )
  EVENTS_ENABLED = true;

  /** How long events are kept (ms); a cursor older than that → 410. */
  @Type(() => Number)
  @IsInt()
  @Min(1000)
  @Max(366 * 86_400_000)
  EVENTS_RETENTION_MS = 7 * 86_400_000;

  /**
   * How often each instance looks for changes made through other instances for its waiting
   * readers (long polls, streams) and for webhook deliveries to make (ms).
   */
  @Type(() => Number)
  @IsInt()
  @Min(20)
  @Max(60_000)
  EVENTS_POLL_MS = 500;

  /**
   * How often each instance reconciles abandoned intents and deletes events past retention (ms).
   * Both read the feed's collections; on a database that scans them this is the feed's
   * background cost.
   */
  @Type(() => Number)
  @IsInt()
  @Min(50)
  @Max(3_600_000)
  EVENTS_SWEEP_MS = 10_000;

  /**
   * How old a write's recorded intent must be before the reconciler records its events itself
   * (the writer died between the change and its event). Above the longest request (ms).
   */
  @Type(() => Number)
  @IsInt()
  @Min(100)
  @Max(3_600_000)
  EVENTS_INTENT_GRACE_MS = 60_000;

  /** Comment lines a stream sends while quiet, so proxies keep it open (ms). */
  @Type(() => Number)
  @IsInt()
  @Min(100)
  @Max(300_000)
  EVENTS_HEARTBEAT_MS = 15_000;

  /**
   * Streams and waiting long polls one API key may hold open at once, over every instance
   * (the tenant's plan may set its own, `streamsPerKey`); more → 429 TOO_MANY_STREAMS.
   */
  @Type(() => Number)
  @IsInt()
  @Min(1)
  @Max(10_000)
  EVENTS_MAX_STREAMS_PER_KEY = 10;

  /**
   * The same for a publishable key (one key serves every visitor of a site, so it gets its own,
   * usually smaller, number); more → 429 TOO_MANY_STREAMS.
   */
  @Type(() => Number)
  @IsInt()
  @Min(1)
  @Max(10_000)
  EVENTS_MAX_STREAMS_PER_PUBLISHABLE_KEY = 5;

  /**
   * Streams and waiting long polls an instance holds open at once, over all keys; more → 429
   * TOO_MANY_STREAMS. Counted in the instance's memory: it guards this instance's sockets. With EVENTS_STREAM_BUFFER_BYTES it bounds what slow readers can hold
   * (200 × 1 MiB) and what the waiting readers poll (one query per namespace per EVENTS_POLL_MS).
   */
  @Type(() => Number)
  @IsInt()
  @Min(1)
  @Max(100_000)
  EVENTS_MAX_STREAMS = 200;

  /**
   * How long a key's stream slot outlives the instance that holds it (ms): the instance renews
   * its slots every third of this while their streams are open, so the slots of an instance that
   * died free themselves within this bound and the key may open them again elsewhere.
   */
  @Type(() => Number)
  @IsInt()
  @Min(1000)
  @Max(600_000)
  EVENTS_STREAM_LEASE_MS = 30_000;

  /**
   * Unsent bytes an instance holds for one stream; a stream that would hold more (its client
   * stopped reading) is closed, and its client resumes with Last-Event-ID.
   */
  @Type(() => Number)
  @IsInt()
  @Min(64 * 1024)
  @Max(64 * 1024 * 1024)
  EVENTS_STREAM_BUFFER_BYTES = 1024 * 1024;
}
