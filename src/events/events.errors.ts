import { DomainError } from '../common/errors';

/** A cursor from before the oldest kept event: what came in between is gone. */
export class CursorExpiredError extends DomainError {
  constructor(after: number) {
    super(
      'CURSOR_EXPIRED',
      `Events after ${after} are no longer kept (EVENTS_RETENTION_MS). Read the resources again and continue from the newest event.`,
    );
  }
}
