import type { Logger } from '@nestjs/common';
import type { BackgroundTask } from './background-tasks';

/**
 * Long work an instance runs in the background under a lease it holds (an erasure, a tenant
 * move): started by a request or taken over by a background task. On shutdown it stops at its
 * next step (`stopping`) and is waited for; what is left is taken over elsewhere once the lease
 * runs out, so a failure is logged, never thrown.
 */
export class BackgroundRuns {
  private readonly working = new Set<Promise<void>>();
  private closing = false;

  constructor(
    /** The task that takes abandoned work over: it stops with the app. */
    private readonly task: BackgroundTask,
    private readonly logger: Logger,
  ) {}

  /** True once the app shuts down: work in progress stops at its next step. */
  get stopping(): boolean {
    return this.closing || this.task.isStopped;
  }

  /** Runs `work`; a failure is logged as `interrupted` with `context`. */
  start(work: () => Promise<void>, interrupted: string, context: Record<string, unknown>): void {
    const run = work()
      .catch((error: unknown) => {
        // The lease runs out and the work is taken over; nothing is lost.
        this.logger.warn({ err: error, ...context }, interrupted);
      })
      .finally(() => this.working.delete(run));
    this.working.add(run);
  }

  /** Stops new steps and waits for the work under way (called when the module stops). */
  async stop(): Promise<void> {
    this.closing = true;
    await Promise.all(this.working);
  }
}
