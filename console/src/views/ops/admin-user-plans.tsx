import { useState, type FormEvent } from 'react';
import type { Schemas } from '@profile-data/client';
import { unwrap, useApi } from '../../api';
import { ActionError, useAction, useConfirmedAction } from '../../ui/action';
import { Async, useLoad } from '../../ui/async';
import { Confirm } from '../../ui/confirm';
import { ListTable } from '../../ui/list-table';
import {
  LIMITS,
  LimitsTable,
  PlanFacts,
  UsageTable,
  lastDays,
  totalOf,
  type LimitRow,
} from '../plans';
import { when } from './shared';

type PlanEntry = Schemas['PlanDto'];
type CatalogPlan = Schemas['CatalogPlanDto'];
type UsageRow = Schemas['UsageRowDto'];

/** Days of usage the user page shows, today (UTC) included. */
const USAGE_DAYS = 7;
const YEAR_MS = 365 * 86_400_000;

/**
 * The entry that applies at `now`, by the rule the service applies (docs/plans.md, "The active
 * plan"): `since ≤ now < until`; of several, the latest `since`, and of equal ones the last listed.
 * The operator's user page has the entries and the catalogue, not the service's answer for the
 * user, so it works the plan out the same way.
 */
export function activeEntry(entries: readonly PlanEntry[], now: number): PlanEntry | null {
  let active: PlanEntry | null = null;
  for (const entry of entries) {
    const since = Date.parse(entry.since);
    if (since > now || Date.parse(entry.until) <= now) continue;
    if (active === null || since >= Date.parse(active.since)) active = entry;
  }
  return active;
}

/** A moment as a datetime-local input holds it: the reader's local time, to the minute. */
function localInput(at: number): string {
  const offset = new Date(at).getTimezoneOffset() * 60_000;
  return new Date(at - offset).toISOString().slice(0, 16);
}

/** An entry as PUT /admin/users/{subject}/plans takes it back: as it was stored. */
function inputOf(entry: PlanEntry): Schemas['PlanInputDto'] {
  return {
    planName: entry.planName,
    since: entry.since,
    until: entry.until,
    // Stored metadata passed the rules of profile settings when it was set.
    metadata: entry.metadata as Schemas['PlanInputDto']['metadata'],
  };
}

/**
 * A user's plans on the operator's user page: the active plan and the limits it gives (the
 * catalogue's, and the deployment's where the plan sets none), the entries with their dates,
 * setting a plan of the catalogue, and the user's recent usage (GET /admin/usage).
 */
export function UserPlans(props: {
  subject: string;
  entries: readonly PlanEntry[];
  collections: { used: number; limit: number | null };
  onSaved: () => void;
}) {
  const { client, me } = useApi();
  const { subject, entries } = props;
  const catalogue = useLoad(
    async (signal) => (await unwrap(client.GET('/admin/plans', { signal }))) ?? [],
    [client],
  );
  const save = async (next: readonly PlanEntry[]) => {
    await unwrap(
      client.PUT('/admin/users/{subject}/plans', {
        params: { path: { subject } },
        body: next.map(inputOf),
      }),
    );
    props.onSaved();
  };
  const remove = useConfirmedAction((at: number) => save(entries.filter((_, i) => i !== at)));
  const now = Date.now();
  const active = activeEntry(entries, now);

  return (
    <>
      <h2>Plan and limits</h2>
      <PlanFacts
        plan={active && { name: active.planName, since: active.since, until: active.until }}
      />
      <Async loaded={catalogue}>
        {(plans) => {
          const plan = active && plans.find((each) => each.name === active.planName);
          const rows: LimitRow[] = LIMITS.map(({ name }) =>
            name === 'collections'
              ? { name, ...props.collections }
              : { name, limit: plan?.limits[name] ?? me.limits[name].limit },
          );
          return (
            <>
              {active && !plan && (
                <p className="hint">
                  The plan {active.planName} is not in the catalogue: the deployment&apos;s limits
                  apply.
                </p>
              )}
              <LimitsTable caption="Limits" rows={rows} />
              <p className="hint">The collections used are those of the standard branch.</p>
            </>
          );
        }}
      </Async>
      <h2>Plan entries</h2>
      <ListTable
        rows={entries.map((entry, at) => ({ entry, at }))}
        rowKey={({ at }) => String(at)}
        emptyText="No plan entries: the deployment's limits apply."
        className="ops-table"
        label="Plan entries"
        columns={[
          { header: 'Plan', className: 'mono', cell: ({ entry }) => entry.planName },
          { header: 'Since', cell: ({ entry }) => when(entry.since) },
          { header: 'Until', cell: ({ entry }) => when(entry.until) },
          {
            header: 'State',
            cell: ({ entry }) =>
              entry === active
                ? 'active'
                : Date.parse(entry.until) <= now
                  ? 'ended'
                  : Date.parse(entry.since) > now
                    ? 'not yet'
                    : 'overridden',
          },
          {
            header: 'Actions',
            cell: ({ entry, at }) => (
              <button
                type="button"
                className="danger"
                aria-label={`Remove the entry ${entry.planName} since ${when(entry.since)}`}
                onClick={() => remove.ask(at)}
              >
                Remove
              </button>
            ),
          },
        ]}
      />
      <ActionError error={remove.error} />
      <Confirm {...remove.dialog} title="Remove the plan entry?" confirmLabel="Remove entry">
        <p>
          The user stops holding{' '}
          <span className="mono">{entries[remove.target ?? -1]?.planName ?? ''}</span> for these
          dates. Its data stays; the limits that apply next reach every instance within
          PLAN_CACHE_MS.
        </p>
      </Confirm>
      <Async loaded={catalogue}>
        {(plans) => <SetPlan plans={plans} onSet={(entry) => save([...entries, entry])} />}
      </Async>
      <h2>Usage</h2>
      <UserUsage subject={subject} />
    </>
  );
}

/** Adds an entry naming a plan of the catalogue, from `since` until `until`. */
function SetPlan(props: {
  plans: readonly CatalogPlan[];
  onSet: (entry: PlanEntry) => Promise<void>;
}) {
  const [planName, setPlanName] = useState(props.plans[0]?.name ?? '');
  const [since, setSince] = useState(() => localInput(Date.now()));
  const [until, setUntil] = useState(() => localInput(Date.now() + YEAR_MS));
  const set = useAction(async () => {
    await props.onSet({
      planName,
      since: new Date(since).toISOString(),
      until: new Date(until).toISOString(),
      metadata: {},
    });
  });
  if (props.plans.length === 0)
    return (
      <p className="hint">
        The catalogue has no plans yet: define one with PUT /admin/plans/&#123;planName&#125;.
      </p>
    );
  const submit = (event: FormEvent) => {
    event.preventDefault();
    set.run();
  };
  return (
    <form className="panel" aria-labelledby="set-plan-title" onSubmit={submit}>
      <h3 id="set-plan-title">Set a plan</h3>
      <div className="form-grid">
        <label htmlFor="set-plan-name">Plan</label>
        <select
          id="set-plan-name"
          value={planName}
          onChange={(event) => setPlanName(event.target.value)}
        >
          {props.plans.map((plan) => (
            <option key={plan.name} value={plan.name}>
              {plan.name}
            </option>
          ))}
        </select>
        <label htmlFor="set-plan-since">Since (local time)</label>
        <input
          id="set-plan-since"
          type="datetime-local"
          required
          value={since}
          onChange={(event) => setSince(event.target.value)}
        />
        <label htmlFor="set-plan-until">Until (local time)</label>
        <input
          id="set-plan-until"
          type="datetime-local"
          required
          value={until}
          onChange={(event) => setUntil(event.target.value)}
        />
      </div>
      <p className="hint">
        The entry is added to the user&apos;s plans; of the entries in force, the one with the
        latest start applies.
      </p>
      <div className="toolbar">
        <button type="submit" className="primary" disabled={set.busy}>
          {set.busy ? 'Setting…' : 'Set plan'}
        </button>
      </div>
      <ActionError error={set.error} />
    </form>
  );
}

/** The user's usage per UTC day of the last days (the days it used nothing have no row). */
function UserUsage(props: { subject: string }) {
  const { client } = useApi();
  const usage = useLoad(
    async (signal): Promise<UsageRow[]> =>
      // A JSON answer is a page of rows (the NDJSON type is one line's).
      ((await unwrap(
        client.GET('/admin/usage', {
          params: {
            query: { tenant: `user:${props.subject}`, ...lastDays(USAGE_DAYS), limit: USAGE_DAYS },
          },
          signal,
        }),
      )) as UsageRow[] | undefined) ?? [],
    [client, props.subject],
  );
  return (
    <Async loaded={usage}>
      {(rows) => (
        <UsageTable
          days={rows}
          total={totalOf(rows)}
          caption={`Usage of the last ${USAGE_DAYS} days`}
          emptyText={`No usage recorded in the last ${USAGE_DAYS} days.`}
        />
      )}
    </Async>
  );
}
