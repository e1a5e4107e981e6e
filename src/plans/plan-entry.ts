/**
 * A plan as a user or a team holds it: which plan of the catalogue, from when and until when.
 * A user's entries are on its root profile, a team's on the team (PUT /admin/users/{subject}/plans,
 * PUT /admin/teams/{id}/plans).
 */
export interface PlanEntry {
  planName: string;
  since: Date;
  /** The first moment the entry no longer applies; null: it never ends. */
  until: Date | null;
}

/**
 * The entry that applies at `now` (docs/plans.md, "The active plan"): one with
 * `since ≤ now < until`; of several, the latest `since`, and of those with the same `since`, the
 * one listed last (the operator's latest word). Null when none applies: the deployment's limits.
 */
export function activeEntry(entries: readonly PlanEntry[], now: Date): PlanEntry | null {
  const at = now.getTime();
  let active: PlanEntry | null = null;
  for (const entry of entries) {
    if (entry.since.getTime() > at) continue;
    if (entry.until !== null && entry.until.getTime() <= at) continue;
    if (active === null || entry.since.getTime() >= active.since.getTime()) active = entry;
  }
  return active;
}
