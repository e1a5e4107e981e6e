import {
  Global,
  Injectable,
  Logger,
  Module,
  type OnApplicationBootstrap,
  type OnModuleDestroy,
} from '@nestjs/common';
import { RepeatingTask } from './repeating-task';

/** How much a run's delay varies (±10 %), so the instances of a deployment do not run in step. */
const JITTER = 0.1;

interface CommonOptions {
  /** Names the task in logs and metrics (`events-sweep`, `erasures`, …). */
  name: string;
  intervalMs: number;
  /** False: never scheduled (the feature is off), but `runNow` still runs it. Default true. */
  enabled?: boolean;
}

/**
 * A task that polls for work nobody announces to this instance may wait longer while it finds
 * none: each idle run doubles the wait, up to `maxMs`; a run that found work, or `wake`, brings
 * it back to `intervalMs`. Only for work whose documented bounds hold with `maxMs` (or whose
 * bounds say so): a task that keeps a lease or a promise of timeliness runs at its interval.
 */
export interface IdleBackoff {
  maxMs: number;
}

export type BackgroundTaskOptions = CommonOptions &
  (
    | {
        /** One run; a run never overlaps the previous one. */
        run: () => Promise<unknown>;
        idleBackoff?: undefined;
      }
    | {
        /** One run; resolves whether it found work (false: the next run may wait longer). */
        run: () => Promise<boolean>;
        idleBackoff: IdleBackoff;
      }
  );

/** A registered task: run it now (tests, or work that cannot wait), or see that it was stopped. */
export interface BackgroundTask {
  runNow(): Promise<void>;
  /**
   * This instance made work for the task (a write): a task backed off while idle comes back to
   * its interval at once. Cheap enough for every write: nothing happens when it is not backed off.
   */
  wake(): void;
  /** True once the app is shutting down: long runs check it between steps. */
  readonly isStopped: boolean;
}

/** What the host tells about each finished run (the metrics module listens). */
export type TaskObserver = (name: string, outcome: 'ok' | 'failed', seconds: number) => void;

/**
 * The one host of the work every instance repeats on its own (sweeps, reconcilers, polls): a
 * service registers a task when it is built; the host starts every task once the app has
 * booted, stops them on shutdown before the database connection closes (waiting for a run under
 * way), spreads their runs with jitter, backs off the polls that find nothing (IdleBackoff), so
 * an instance with no requests costs its database little, and logs and reports every failed run.
 */
@Injectable()
export class BackgroundTasks implements OnApplicationBootstrap, OnModuleDestroy {
  private readonly logger = new Logger('BackgroundTasks');
  private readonly tasks: RepeatingTask[] = [];
  private readonly observers: TaskObserver[] = [];
  private started = false;

  register(options: BackgroundTaskOptions): BackgroundTask {
    const task = new RepeatingTask(
      options.intervalMs,
      () => this.timed(options.name, options.run),
      (error) => this.logger.warn({ err: error, task: options.name }, `${options.name} failed`),
      JITTER,
      options.idleBackoff?.maxMs,
    );
    if (options.enabled === false) return task;
    this.tasks.push(task);
    if (this.started) task.start();
    return task;
  }

  observe(observer: TaskObserver): void {
    this.observers.push(observer);
  }

  onApplicationBootstrap(): void {
    this.started = true;
    for (const task of this.tasks) task.start();
  }

  async onModuleDestroy(): Promise<void> {
    await Promise.all(this.tasks.map((task) => task.stop()));
  }

  /** Runs and reports `run`, passing on what it resolved (whether it found work). */
  private async timed(name: string, run: () => Promise<unknown>): Promise<unknown> {
    const started = performance.now();
    let outcome: 'ok' | 'failed' = 'failed';
    try {
      const found = await run();
      outcome = 'ok';
      return found;
    } finally {
      const seconds = (performance.now() - started) / 1000;
      for (const observer of this.observers) observer(name, outcome, seconds);
    }
  }
}

/** Makes BackgroundTasks injectable everywhere (imported once, by the root module). */
@Global()
@Module({ providers: [BackgroundTasks], exports: [BackgroundTasks] })
export class BackgroundTasksModule {}
