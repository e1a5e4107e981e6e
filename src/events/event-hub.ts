import { Logger } from '@nestjs/common';
import { RepeatingTask } from '../common/scheduling/repeating-task';

/** A reader waiting for a namespace's events after `seen` (the newest number it has looked at). */
export interface EventWaiter {
  seen: number;
  /** The namespace has events up to `latest`, beyond `seen`. */
  wake(latest: number): void;
}

/**
 * Wakes the readers that wait for a namespace's next events (long polls and streams). A change
 * made through this instance wakes them at once; one made through another instance is found by
 * a poll of the namespace's newest number every `pollMs` — one query per namespace with
 * waiting readers, however many readers wait.
 */
export class EventHub {
  private readonly logger = new Logger('EventHub');
  private readonly namespaces = new Map<string, Set<EventWaiter>>();
  private readonly task: RepeatingTask;

  constructor(
    pollMs: number,
    private readonly latestOf: (namespace: string) => Promise<number>,
  ) {
    this.task = new RepeatingTask(
      pollMs,
      () => this.poll(),
      (error) => this.logger.warn({ err: error }, 'could not poll the event feed'),
    );
  }

  start(): void {
    this.task.start();
  }

  stop(): Promise<void> {
    return this.task.stop();
  }

  /** Wakes `waiter` whenever the namespace has events beyond its `seen`; returns the unsubscribe. */
  subscribe(namespace: string, waiter: EventWaiter): () => void {
    let waiters = this.namespaces.get(namespace);
    if (!waiters) {
      waiters = new Set();
      this.namespaces.set(namespace, waiters);
    }
    waiters.add(waiter);
    const all = waiters;
    return () => {
      all.delete(waiter);
      if (all.size === 0 && this.namespaces.get(namespace) === all)
        this.namespaces.delete(namespace);
    };
  }

  /** The namespace's feed has events up to `latest` (this instance appended them). */
  notify(namespace: string, latest: number): void {
    for (const waiter of [...(this.namespaces.get(namespace) ?? [])])
      if (waiter.seen < latest) waiter.wake(latest);
  }

  /** Readers waiting now, over every namespace. */
  get waiting(): number {
    let count = 0;
    for (const waiters of this.namespaces.values()) count += waiters.size;
    return count;
  }

  private async poll(): Promise<void> {
    for (const namespace of [...this.namespaces.keys()])
      this.notify(namespace, await this.latestOf(namespace));
  }
}
