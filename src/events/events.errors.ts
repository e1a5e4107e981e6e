import { HttpStatus } from '@nestjs/common';
import { defineErrors, DomainError } from '../common/errors';

/** The codes the change feed owns. */
export const EVENTS_ERRORS = defineErrors({
  CURSOR_EXPIRED: {
    status: HttpStatus.GONE,
    title: 'The cursor is older than the events kept; resynchronise',
  },
  TOO_MANY_STREAMS: {
    status: HttpStatus.TOO_MANY_REQUESTS,
    title: 'Too many open event streams and long polls',
  },
});

/** A cursor from before the oldest kept event: what came in between is gone. */
export class CursorExpiredError extends DomainError {
  constructor(after: number) {
    super(
      EVENTS_ERRORS.CURSOR_EXPIRED,
      `Events after ${after} are no longer kept (EVENTS_RETENTION_MS). Read the resources again and continue from the newest event.`,
    );
  }
}

/** Seconds a refused stream or long poll is asked to wait before it tries again. */
export const STREAM_RETRY_AFTER_SECONDS = 5;

/** The key, or the instance, holds as many streams and waiting long polls as it may. */
export class TooManyStreamsError extends DomainError {
  constructor(holder: 'key' | 'publishable key' | 'instance', limit: number) {
    super(
      EVENTS_ERRORS.TOO_MANY_STREAMS,
      holder !== 'instance'
        ? `This API key holds ${limit} event streams and waiting long polls over all instances (${holder === 'key' ? "the plan's streamsPerKey, else EVENTS_MAX_STREAMS_PER_KEY" : 'EVENTS_MAX_STREAMS_PER_PUBLISHABLE_KEY'}). Close one, or retry after the time in Retry-After.`
        : `This instance holds ${limit} event streams and waiting long polls (EVENTS_MAX_STREAMS). Retry after the time in Retry-After.`,
    );
  }

  override get headers(): Record<string, string> {
    return { 'Retry-After': String(STREAM_RETRY_AFTER_SECONDS) };
  }
}
