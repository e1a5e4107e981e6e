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

/**
 * An action on one target (a file, a key, an index) that a `Confirm` dialog asks about first:
 * `ask(target)` opens the dialog (`dialog` goes to `<Confirm>`), its confirm button runs `act`
 * on that target, cancel forgets it. The dialog closes when the action has succeeded, and stays
 * open on a failure, whose `error` the view shows; with `close: 'at-once'` it closes as the
 * action starts.
 */
export function useConfirmedAction<T>(
  act: (target: T) => Promise<void>,
  options: { close?: 'when-done' | 'at-once' } = {},
) {
  // Boxed: a target may be falsy (a count of 0).
  const [asked, setAsked] = useState<{ target: T } | undefined>(undefined);
  const atOnce = options.close === 'at-once';
  const action = useAction(async (target: T) => {
    if (atOnce) setAsked(undefined);
    await act(target);
    if (!atOnce) setAsked(undefined);
  });
  return {
    /** What the dialog asks about, while it is open. */
    target: asked?.target,
    ask: (target: T) => setAsked({ target }),
    busy: action.busy,
    error: action.error,
    dialog: {
      open: asked !== undefined,
      onConfirm: () => asked && action.run(asked.target),
      onCancel: () => setAsked(undefined),
    },
  };
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
