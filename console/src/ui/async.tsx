import {
  useCallback,
  useEffect,
  useRef,
  useState,
  type DependencyList,
  type ReactNode,
} from 'react';
import { ProblemView } from './problem';

export type Loaded<T> =
  { state: 'loading' } | { state: 'error'; error: unknown } | { state: 'ready'; data: T };

/**
 * Loads what a view shows and loads it again when `deps` change or `reload()` is called; an
 * answer that arrives after a newer request started is dropped.
 */
export function useLoad<T>(
  load: (signal: AbortSignal) => Promise<T>,
  deps: DependencyList,
): Loaded<T> & { reload: () => void } {
  const [loaded, setLoaded] = useState<Loaded<T>>({ state: 'loading' });
  const [round, setRound] = useState(0);
  const latest = useRef(0);
  useEffect(() => {
    const controller = new AbortController();
    const id = ++latest.current;
    setLoaded({ state: 'loading' });
    load(controller.signal).then(
      (data) => id === latest.current && setLoaded({ state: 'ready', data }),
      (error: unknown) => id === latest.current && setLoaded({ state: 'error', error }),
    );
    return () => controller.abort();
  }, [...deps, round]);
  const reload = useCallback(() => setRound((n) => n + 1), []);
  return { ...loaded, reload };
}

/** The loading, failure and empty states every view shares, around what it shows when ready. */
export function Async<T>(props: {
  loaded: Loaded<T> & { reload?: () => void };
  empty?: (data: T) => boolean;
  emptyText?: string;
  children: (data: T) => ReactNode;
}) {
  const { loaded } = props;
  if (loaded.state === 'loading') return <Loading />;
  if (loaded.state === 'error') return <ProblemView error={loaded.error} onRetry={loaded.reload} />;
  if (props.empty?.(loaded.data)) return <Empty text={props.emptyText ?? 'Nothing here yet.'} />;
  return <>{props.children(loaded.data)}</>;
}

export function Loading(props: { text?: string }) {
  return (
    <p className="loading" role="status" aria-live="polite">
      {props.text ?? 'Loading…'}
    </p>
  );
}

export function Empty(props: { text: string }) {
  return <p className="empty">{props.text}</p>;
}
