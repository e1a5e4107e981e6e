import { BudgetExceeded, withinBudget } from './schema-budget';

/** Holds this thread for `ms` without using the CPU, as a thread waiting for a core would. */
const wait = (ms: number) => Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ms);
/**
 * How much CPU the process had meanwhile is what decides a retry; the tests say it rather than
 * measure it, so that a busy machine cannot change their outcome.
 */
const hadTheCpu = () => performance.now();
const hadNoCpu = () => 0;

describe('withinBudget', () => {
  it('answers what the work answers within the budget', () => {
    expect(withinBudget(1000, () => 42)).toBe(42);
  });

  it('judges by the process CPU by default (process.cpuUsage, every thread)', () => {
    // The process reports no CPU used meanwhile: the stopped work runs again.
    const usage = jest.spyOn(process, 'cpuUsage').mockReturnValue({ user: 0, system: 0 });
    try {
      let runs = 0;
      const starvedOnce = () => {
        runs += 1;
        if (runs === 1) wait(2000);
        return runs;
      };
      expect(withinBudget(50, starvedOnce, { retriesWhenStarved: 1 })).toBe(2);
      expect(usage).toHaveBeenCalled();
    } finally {
      usage.mockRestore();
    }
  });

  it('stops work that had the CPU past the budget, retries or not', () => {
    let runs = 0;
    const costly = () => {
      runs += 1;
      wait(2000);
    };
    expect(() => withinBudget(50, costly, { retriesWhenStarved: 2, cpuMs: hadTheCpu })).toThrow(
      BudgetExceeded,
    );
    expect(runs).toBe(1);
  });

  it('runs work again that was stopped while the thread had no CPU, up to the retries', () => {
    let runs = 0;
    // Held for 2 s without CPU the first time (a starved thread), quick the second.
    const starvedOnce = () => {
      runs += 1;
      if (runs === 1) wait(2000);
      return runs;
    };
    expect(withinBudget(50, starvedOnce, { retriesWhenStarved: 2, cpuMs: hadNoCpu })).toBe(2);

    let always = 0;
    const starvedAlways = () => {
      always += 1;
      wait(2000);
    };
    expect(() =>
      withinBudget(50, starvedAlways, { retriesWhenStarved: 2, cpuMs: hadNoCpu }),
    ).toThrow(BudgetExceeded);
    expect(always).toBe(3);
  });

  it('does not run work again without retries', () => {
    let runs = 0;
    expect(() =>
      withinBudget(
        50,
        () => {
          runs += 1;
          wait(2000);
        },
        { cpuMs: hadNoCpu },
      ),
    ).toThrow(BudgetExceeded);
    expect(runs).toBe(1);
  });
});
