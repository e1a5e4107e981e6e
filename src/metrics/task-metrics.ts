import { Counter, Histogram, type Registry } from 'prom-client';
import type { TaskObserver } from '../common/scheduling/background-tasks';

/** Seconds: from a sweep that finds nothing (~1 ms) to one that works through a backlog. */
const DURATION_BUCKETS = [0.001, 0.01, 0.1, 1, 10, 60];

/** The runs of the background tasks (sweeps, reconcilers, polls), by task and outcome. */
export class TaskMetrics {
  private readonly runs: Counter<'task' | 'outcome'>;
  private readonly duration: Histogram<'task'>;

  constructor(registry: Registry) {
    this.runs = new Counter({
      name: 'background_task_runs_total',
      help: 'Runs of the background tasks, by task and outcome (ok, failed)',
      labelNames: ['task', 'outcome'],
      registers: [registry],
    });
    this.duration = new Histogram({
      name: 'background_task_duration_seconds',
      help: 'How long the runs of the background tasks took',
      labelNames: ['task'],
      buckets: DURATION_BUCKETS,
      registers: [registry],
    });
  }

  /** Hands the task host this observer; task names come from the code, so labels stay few. */
  readonly observer: TaskObserver = (task, outcome, seconds) => {
    this.runs.inc({ task, outcome });
    this.duration.observe({ task }, seconds);
  };
}
