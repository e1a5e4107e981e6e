import { Injectable } from '@nestjs/common';
import type { Types } from 'mongoose';
import { GroupCommit } from '../common/batching/group-commit';
import { isDatabaseUnavailable } from '../common/errors';
import type { PlannedChange } from './event-intent.schema';
import { EventIntentsRepository, type NewIntent } from './event-intents.repository';
import type { ChangeScope } from './event-scope';

/**
 * The intents of the writes under way (docs/events.md): the intents of concurrent writes are
 * inserted together, and deleted together once their events are appended (group commit).
 */
@Injectable()
export class EventIntentLog {
  private readonly inserts: GroupCommit<NewIntent>;
  private readonly deletes: GroupCommit<Types.ObjectId>;

  constructor(private readonly intents: EventIntentsRepository) {
    const failsQueued = isDatabaseUnavailable;
    this.inserts = new GroupCommit<NewIntent>(
      async (batch) => {
        await this.intents.insertMany(batch);
        return batch.map((): void => undefined);
      },
      { failsQueued },
    );
    this.deletes = new GroupCommit<Types.ObjectId>(
      async (ids) => {
        await this.intents.deleteMany(ids);
        return ids.map((): void => undefined);
      },
      { failsQueued },
    );
  }

  /** Records that a write in `scope` is about to make `changes`; returns the intent's id. */
  async open(scope: ChangeScope, changes: PlannedChange[]): Promise<Types.ObjectId> {
    const id = this.intents.newId();
    await this.inserts.add({ id, scope, changes, createdAt: new Date() });
    return id;
  }

  /** The write's events are appended: the intent is done. */
  close(id: Types.ObjectId): Promise<void> {
    return this.deletes.add(id);
  }

  /** The write was refused and changed nothing; a failure leaves the intent to the reconciler. */
  async discard(id: Types.ObjectId): Promise<void> {
    await this.intents.deleteOne(id).catch(() => undefined);
  }
}
