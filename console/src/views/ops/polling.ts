import { useEffect, useState } from 'react';

export type Polled<T> =
  { state: 'loading' } | { state: 'error'; error: unknown } | { state: 'ready'; data: T };

/**
 * Loads `load` now and again every `everyMs` until `ended` says what it got is final (or a load
 * fails). A refresh keeps what is shown until its answer comes.
 */
export function usePolling<T>(
  load: (signal: AbortSignal) => Promise<T>,
  ended: (data: T) => boolean,
  everyMs: number,
  deps: readonly unknown[],
): Polled<T> & { reload: () => void } {
  const [polled, setPolled] = useState<Polled<T>>({ state: 'loading' });
  const [round, setRound] = useState(0);
  useEffect(() => {
    const controller = new AbortController();
    let timer: ReturnType<typeof setTimeout> | undefined;
    const tick = () => {
      load(controller.signal).then(
        (data) => {
          if (controller.signal.aborted) return;
          setPolled({ state: 'ready', data });
          if (!ended(data)) timer = setTimeout(tick, everyMs);
        },
        (error: unknown) => {
          if (!controller.signal.aborted) setPolled({ state: 'error', error });
        },
      );
    };
    setPolled({ state: 'loading' });
    tick();
    return () => {
      controller.abort();
      if (timer !== undefined) clearTimeout(timer);
    };
  }, [...deps, round]);
  return { ...polled, reload: () => setRound((n) => n + 1) };
}
