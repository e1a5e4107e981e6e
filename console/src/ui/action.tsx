import { useState } from 'react';
import { ProblemView } from './problem';

/**
 * A user action (a save, a delete): runs one at a time, remembers its failure to show it, and
 * reports whether it is under way so that its button can say so.
 */
export function useAction<A extends unknown[]>(
  act: (...args: A) => Promise<void>,
): { run: (...args: A) => void; busy: boolean; error: unknown; clear: () => void } {
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<unknown>(undefined);
  const run = (...args: A) => {
    if (busy) return;
    setBusy(true);
    setError(undefined);
    act(...args).then(
      () => setBusy(false),
      (failure: unknown) => {
        setBusy(false);
        setError(failure);
      },
    );
  };
  return { run, busy, error, clear: () => setError(undefined) };
}

/** The failure of an action, when there is one. */
export function ActionError(props: { error: unknown }) {
  return props.error === undefined ? null : <ProblemView error={props.error} />;
}

/**
 * The buttons of a rule's form: save (the form's submit) and, when the rule is set, remove —
 * each disabled while its action runs.
 */
export function SaveOrRemove(props: {
  what: string;
  save: { busy: boolean };
  remove: { busy: boolean; run: () => void };
  removable: boolean;
}) {
  return (
    <>
      <button type="submit" className="primary" disabled={props.save.busy}>
        Save {props.what}
      </button>
      {props.removable && (
        <button
          type="button"
          className="danger"
          disabled={props.remove.busy}
          onClick={() => props.remove.run()}
        >
          Remove {props.what}
        </button>
      )}
    </>
  );
}
