import type { Logger } from '@nestjs/common';
import { DomainError } from '../common/errors';
import type { IntentRef } from './event-intents.repository';
import type { RecordedChange } from './event-scope';

/**
 * A write's changes under way in the feed (EventsService.begin): its intent is recorded and the
 * tenant-content gate passed before the write is sent. The caller then writes and settles the
 * change once: `commit` with the changes the write made, `abandon` when it made none, `failed`
 * when it threw. Settling leaves the gate; a second settling does nothing, so the events of a
 * write are appended at most once by it (and by the reconciler only from a left intent).
 */
export interface FeedChange {
  /**
   * The write made `changes` (or what `changes` builds): their events are appended, in order,
   * and the intent goes. Once the write succeeded its answer stands: events that cannot be built
   * or appended now are the reconciler's (the intent stays), and this does not throw for them.
   */
  commit(changes: RecordedChange[] | (() => RecordedChange[])): Promise<void>;
  /** The write was not sent, or changed nothing: the intent goes, no event. */
  abandon(): Promise<void>;
  /**
   * The write threw `error`. A rule's refusal (a DomainError) changed nothing: as `abandon`.
   * Any other failure may have changed something: the intent stays for the reconciler.
   */
  failed(error: unknown): Promise<void>;
}

/** What a FeedChange needs of the feed: appending, the intent log and the gate. */
export interface FeedChangeParts {
  append(changes: RecordedChange[], intent: string): Promise<void>;
  close(intent: IntentRef): void;
  discard(intent: IntentRef): Promise<void>;
  leave(): Promise<void>;
  logger: Logger;
}

/** The change of a write the feed does not record (the feed is off, or nothing is planned). */
export const UNRECORDED_CHANGE: FeedChange = {
  commit: () => Promise.resolve(),
  abandon: () => Promise.resolve(),
  failed: () => Promise.resolve(),
};

/** A change whose intent is recorded and whose gate is entered. */
export class OpenFeedChange implements FeedChange {
  private settled = false;

  constructor(
    private readonly intent: IntentRef,
    private readonly parts: FeedChangeParts,
  ) {}

  async commit(changes: RecordedChange[] | (() => RecordedChange[])): Promise<void> {
    if (!this.settle()) return;
    try {
      try {
        const built = typeof changes === 'function' ? changes() : changes;
        await this.parts.append(built, this.intent.id.toHexString());
        this.parts.close(this.intent);
      } catch (error) {
        this.parts.logger.warn({ err: error }, 'events left to the reconciler');
      }
    } finally {
      await this.parts.leave();
    }
  }

  async abandon(): Promise<void> {
    if (!this.settle()) return;
    try {
      await this.parts.discard(this.intent);
    } finally {
      await this.parts.leave();
    }
  }

  async failed(error: unknown): Promise<void> {
    if (error instanceof DomainError) return this.abandon();
    if (!this.settle()) return;
    await this.parts.leave();
  }

  /** True the first time: the change is settled now. */
  private settle(): boolean {
    if (this.settled) return false;
    this.settled = true;
    return true;
  }
}
