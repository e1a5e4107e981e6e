import { Injectable } from '@nestjs/common';
import { GroupCommit } from '../common/batching/group-commit';
import { isDatabaseUnavailable } from '../common/errors';
import type { PlannedChange } from './event-intent.schema';
import { EventIntentsRepository, type IntentRef, type NewIntent } from './event-intents.repository';
import type { ChangeScope } from './event-scope';

/**
 * How often at most an instance deletes the intents of writes whose events are in: a write
 * does not wait for its intent's deletion, which goes with the others of that second in one
 * command.
 */
export const INTENT_CLOSE_SPACING_MS = 1_000;

/**
 * The intents of the writes under way (docs/events.md): the intents of concurrent writes are
 * inserted together (group commit), before their writes. Once a write's events are appended its
 * intent is done, and the done intents are deleted in the background, at most one command per
 * INTENT_CLOSE_SPACING_MS: a write's answer does not wait for it. An intent whose deletion never
 * ran (the process stopped first) is the reconciler's: it finds the intent's events and deletes
 * it without recording anything twice.
 */
@Injectable()
export class EventIntentLog {
  private readonly inserts: GroupCommit<NewIntent & { cluster: string | null }>;
  private readonly deletes: GroupCommit<IntentRef>;

  constructor(private readonly intents: EventIntentsRepository) {
    const failsQueued = isDatabaseUnavailable;
    this.inserts = new GroupCommit<NewIntent & { cluster: string | null }>(
      async (batch) => {
        for (const [cluster, intents] of byCluster(batch)) {
          await this.intents.insertMany(cluster, intents);
        }
        return batch.map((): void => undefined);
      },
      { failsQueued, gather: true },
    );
    this.deletes = new GroupCommit<IntentRef>(
      async (refs) => {
        for (const [cluster, some] of byCluster(refs)) {
          await this.intents.deleteMany(
            cluster,
            some.map((ref) => ref.id),
          );
        }
        return refs.map((): void => undefined);
      },
      { failsQueued, spacingMs: INTENT_CLOSE_SPACING_MS },
    );
  }

  /**
   * Records that a write in `scope` is about to make `changes`, in its tenant's cluster database;
   * returns where the intent is.
   */
  async open(scope: ChangeScope, changes: PlannedChange[]): Promise<IntentRef> {
    const id = this.intents.newId();
    const cluster = await this.intents.clusterOf(scope.tenant);
    await this.inserts.add({ id, scope, changes, createdAt: new Date(), cluster });
    return { id, cluster };
  }

  /**
   * The write's events are appended: the intent is done. Its deletion is queued, not awaited; a
   * failed deletion leaves the intent to the reconciler.
   */
  close(intent: IntentRef): void {
    this.deletes.add(intent).catch(() => undefined);
  }

  /** The write was refused and changed nothing; a failure leaves the intent to the reconciler. */
  async discard(intent: IntentRef): Promise<void> {
    await this.intents.deleteOne(intent).catch(() => undefined);
  }
}

/** Items grouped by the cluster database they go to. */
function byCluster<T extends { cluster: string | null }>(items: T[]): Map<string | null, T[]> {
  const groups = new Map<string | null, T[]>();
  for (const item of items) {
    const group = groups.get(item.cluster);
    if (group) group.push(item);
    else groups.set(item.cluster, [item]);
  }
  return groups;
}
