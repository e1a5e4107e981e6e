/**
 * A value as JSON text, for items and anything else a user stored. Rendered as a text node in a
 * <pre>: what an item holds is never markup here.
 */
export function JsonText(props: { value: unknown; label?: string }) {
  return (
    <pre className="json" aria-label={props.label}>
      {JSON.stringify(props.value, null, 2)}
    </pre>
  );
}

/** A cell's short form: strings as they are, everything else as compact JSON. */
export function cellText(value: unknown): string {
  if (value === undefined) return '';
  if (typeof value === 'string') return value;
  return JSON.stringify(value);
}
