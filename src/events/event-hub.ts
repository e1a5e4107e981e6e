import { Inject, Injectable } from '@nestjs/common';
import { BackgroundTasks, type BackgroundTask } from '../common/scheduling/background-tasks';
import { namespaceKey, parseNamespaceKey, type Namespace } from '../common/tenancy/namespace';
import { APP_CONFIG, type AppConfig } from '../config';
import { EventsRepository } from './events.repository';

/** How long the poll may sleep while no reader waits (a reader that comes wakes it at once). */
const NO_READER_POLL_MAX_MS = 60_000;

/** A reader waiting for a namespace's events after `seen` (the newest number it has looked at). */
export interface EventWaiter {
  seen: number;
  /** The namespace has events up to `latest`, beyond `seen`. */
  wake(latest: number): void;
}

/**
 * Wakes the readers that wait for a namespace's next events (long polls and streams). A change
 * made through this instance wakes them at once; one made through another instance is found by
 * a poll of the namespace's newest number every EVENTS_POLL_MS (a background task) — one query
 * per namespace with waiting readers, however many readers wait. With no reader waiting the poll
 * has nothing to ask and backs off; the first reader to wait wakes it.
 */
@Injectable()
export class EventHub {
  /** namespaceKey → the readers waiting for it. */
  private readonly namespaces = new Map<string, Set<EventWaiter>>();
  /** Told of every append through this instance (the webhook rounds wake on them). */
  private readonly appendListeners: (() => void)[] = [];
  private readonly task: BackgroundTask;

  constructor(
    private readonly events: EventsRepository,
    @Inject(APP_CONFIG) config: AppConfig,
    tasks: BackgroundTasks,
  ) {
    this.task = tasks.register({
      name: 'events-hub-poll',
      intervalMs: config.events.pollMs,
      idleBackoff: { maxMs: NO_READER_POLL_MAX_MS },
      run: () => this.poll(),
      enabled: config.events.enabled,
    });
  }

  /** Wakes `waiter` whenever the namespace has events beyond its `seen`; returns the unsubscribe. */
  subscribe(of: Namespace, waiter: EventWaiter): () => void {
    const namespace = namespaceKey(of);
    let waiters = this.namespaces.get(namespace);
    if (!waiters) {
      waiters = new Set();
      this.namespaces.set(namespace, waiters);
    }
    waiters.add(waiter);
    this.task.wake();
    const all = waiters;
    return () => {
      all.delete(waiter);
      if (all.size === 0 && this.namespaces.get(namespace) === all)
        this.namespaces.delete(namespace);
    };
  }

  /** The namespace's feed has events up to `latest` (this instance appended them). */
  notify(namespace: Namespace, latest: number): void {
    this.wake(namespaceKey(namespace), latest);
    for (const listener of this.appendListeners) listener();
  }

  /** Calls `listener` after every append through this instance, whoever waits. */
  onAppend(listener: () => void): void {
    this.appendListeners.push(listener);
  }

  /** Readers waiting now, over every namespace. */
  get waiting(): number {
    let count = 0;
    for (const waiters of this.namespaces.values()) count += waiters.size;
    return count;
  }

  /** One poll; whether any reader waits (false: none, the next poll may wait longer). */
  private async poll(): Promise<boolean> {
    if (this.namespaces.size === 0) return false;
    for (const key of [...this.namespaces.keys()])
      this.wake(key, await this.events.newestSeq(parseNamespaceKey(key)));
    return true;
  }

  private wake(key: string, latest: number): void {
    for (const waiter of [...(this.namespaces.get(key) ?? [])])
      if (waiter.seen < latest) waiter.wake(latest);
  }
}
