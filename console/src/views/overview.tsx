import { unwrap, useApi, type Me } from '../api';
import { Async, useLoad } from '../ui/async';
import { LIMITS, LimitsTable, PlanFacts, UsageTable, lastDays } from './plans';
import type { ConsoleView } from './registry';

/** Days of usage the overview shows, today (UTC) included. */
const USAGE_DAYS = 7;

/** What the key is and what it may use: GET /me as a page, with the tenant's recent usage. */
function Overview() {
  const { client, me } = useApi();
  // Asked again on each visit: the plan and the use of the limits change while the console is open.
  const current = useLoad((signal) => unwrap(client.GET('/me', { signal })), [client]);
  const rows: [string, string][] = [
    ['Kind of key', me.kind],
    ['Key', me.key ? `${me.key.prefix}… ${me.key.name}` : 'the operator key (configuration)'],
    ['Subject', me.subject ?? '—'],
    ['Team', me.teamId ?? '—'],
    ['Sub profile', me.clientId ? `${me.clientId} / ${me.accountId ?? ''}` : '—'],
    ['Branch', me.branch === '' ? 'standard' : me.branch],
    ['Bound to branch', me.boundBranch === null ? 'no' : me.boundBranch || 'standard'],
    ['Key expires', me.key?.expiresAt ?? 'never'],
  ];
  return (
    <section aria-labelledby="overview-title">
      <h1 id="overview-title">Overview</h1>
      <dl className="facts">
        {rows.map(([name, value]) => (
          <div key={name}>
            <dt>{name}</dt>
            <dd>{value}</dd>
          </div>
        ))}
      </dl>
      <h2>Plan and limits</h2>
      <Async loaded={current}>{(fresh) => <PlanAndLimits me={fresh} />}</Async>
      <h2>Usage</h2>
      <RecentUsage />
    </section>
  );
}

function PlanAndLimits(props: { me: Me }) {
  const { me } = props;
  const per = `per ${me.quota.windowMs / 1000} s`;
  return (
    <>
      {me.kind === 'operator' ? (
        <p className="hint">
          The operator key has no tenant: these are the deployment&apos;s limits.
        </p>
      ) : (
        <PlanFacts plan={me.plan} />
      )}
      <LimitsTable
        caption="Limits"
        rows={LIMITS.map(({ name }) => ({ name, ...me.limits[name] }))}
      />
      <p className="hint">
        Requests are counted {per}; the collections and webhooks used are those of the request
        branch.
      </p>
    </>
  );
}

/** GET /me/usage is for root and team keys holding `usage:read` (a sub key never reads it). */
function RecentUsage() {
  const { me } = useApi();
  const allowed = (me.kind === 'root' || me.kind === 'team') && me.scopes.includes('usage:read');
  if (!allowed) return <p className="hint">Usage is not available to this key.</p>;
  return <UsageOfDays />;
}

function UsageOfDays() {
  const { client } = useApi();
  const usage = useLoad(
    (signal) =>
      unwrap(client.GET('/me/usage', { params: { query: lastDays(USAGE_DAYS) }, signal })),
    [client],
  );
  return (
    <Async loaded={usage}>
      {(used) => (
        <>
          <UsageTable
            days={used.days}
            total={used.total}
            caption={`Usage of the last ${USAGE_DAYS} days`}
            emptyText="No usage in these days."
          />
          <p className="hint">
            Each instance of the service writes what it counted every USAGE_FLUSH_MS (a minute by
            default): the last minute may not show yet.
          </p>
        </>
      )}
    </Async>
  );
}

export const overviewViews: ConsoleView[] = [
  {
    pattern: '/',
    render: () => <Overview />,
    nav: { label: 'Overview', kinds: ['root', 'sub', 'team', 'operator'] },
  },
];
