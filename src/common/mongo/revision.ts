/**
 * Optimistic concurrency on a revision counter: every write `$inc`s it in the same update, and a
 * conditional write filters on the revisions it accepts. Documents written before the counter
 * existed lack the field and count as revision 0, so the filter for 0 also matches a missing field.
 */
export function atRevision(field: string, revisions: readonly number[]): Record<string, unknown> {
  const values: (number | null)[] = [...revisions];
  if (revisions.includes(0)) values.push(null);
  return { [field]: values.length === 1 ? values[0] : { $in: values } };
}

/** The update part that moves the counter (with `$set` and friends in the same update). */
export function nextRevision(field: string): { $inc: Record<string, 1> } {
  return { $inc: { [field]: 1 } };
}
