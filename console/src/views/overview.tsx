import { useApi } from '../api';
import type { ConsoleView } from './registry';

/** What the key is and what it may use: GET /me as a page. */
function Overview() {
  const { me } = useApi();
  const quota = me.quota;
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
      <h2>Quota</h2>
      <dl className="facts">
        <div>
          <dt>Collections</dt>
          <dd>
            {quota.collections ? `${quota.collections.used} of ${quota.collections.limit}` : '—'}
          </dd>
        </div>
        <div>
          <dt>File bytes</dt>
          <dd>{quota.files ? `${quota.files.used} of ${quota.files.limit}` : '—'}</dd>
        </div>
        <div>
          <dt>Indexes per collection</dt>
          <dd>{quota.indexesPerCollection}</dd>
        </div>
        <div>
          <dt>Requests per window</dt>
          <dd>
            {quota.requestsPerWindow} per {quota.windowMs / 1000} s
          </dd>
        </div>
      </dl>
    </section>
  );
}

export const overviewViews: ConsoleView[] = [
  {
    pattern: '/',
    render: () => <Overview />,
    nav: { label: 'Overview', kinds: ['root', 'sub', 'team', 'operator'] },
  },
];
