import type { Schemas } from '@profile-data/client';
import { ListTable } from '../ui/list-table';
import { bytes, when } from './ops/shared';

export type LimitName = keyof Schemas['MeLimitsDto'];
export type UsageCounts = Schemas['UsageCountsDto'];

/** One limit as a view shows it: its value (null: none) and, where it is counted, its use. */
export interface LimitRow {
  name: LimitName;
  limit: number | null;
  used?: number | undefined;
}

/** The limits a plan can set (docs/plans.md, "Limits"), in the order the views list them. */
export const LIMITS: readonly { name: LimitName; label: string; bytes?: boolean }[] = [
  { name: 'collections', label: 'Collections' },
  { name: 'indexesPerCollection', label: 'Indexes per collection' },
  { name: 'itemsPerCollection', label: 'Items per collection' },
  { name: 'fileBytes', label: 'File bytes', bytes: true },
  { name: 'webhooks', label: 'Webhooks' },
  { name: 'requestsPerWindow', label: 'Requests per key and window' },
  { name: 'streamsPerKey', label: 'Streams per key' },
  { name: 'importBytes', label: 'Import size', bytes: true },
];

function amount(value: number, inBytes: boolean | undefined): string {
  return inBytes ? bytes(value) : String(value);
}

/** A plan's name and dates, or what applies without one. */
export function PlanFacts(props: {
  plan: { name: string; since: string; until: string | null } | null;
}) {
  const { plan } = props;
  if (plan === null)
    return (
      <dl className="facts">
        <div>
          <dt>Active plan</dt>
          <dd>No plan: the deployment&apos;s limits</dd>
        </div>
      </dl>
    );
  return (
    <dl className="facts">
      <div>
        <dt>Active plan</dt>
        <dd className="mono">{plan.name}</dd>
      </div>
      <div>
        <dt>Since</dt>
        <dd>{when(plan.since)}</dd>
      </div>
      <div>
        <dt>Until</dt>
        <dd>{plan.until === null ? 'never ends' : when(plan.until)}</dd>
      </div>
    </dl>
  );
}

/** Every limit with its value and, where the service counts it, what is used of it. */
export function LimitsTable(props: { rows: readonly LimitRow[]; caption: string }) {
  const labels = new Map(LIMITS.map((limit) => [limit.name, limit]));
  return (
    <ListTable
      rows={props.rows}
      rowKey={(row) => row.name}
      caption={{ text: props.caption }}
      className="ops-table"
      // Scrolls sideways on a narrow screen: the keyboard must reach it.
      region={props.caption}
      columns={[
        {
          header: 'Limit',
          rowHeader: true,
          cell: (row) => labels.get(row.name)?.label ?? row.name,
        },
        {
          header: 'Value',
          cell: (row) =>
            row.limit === null ? 'none' : amount(row.limit, labels.get(row.name)?.bytes),
        },
        {
          header: 'Used',
          cell: (row) =>
            row.used === undefined ? '—' : amount(row.used, labels.get(row.name)?.bytes),
        },
      ]}
    />
  );
}

/** The UTC days from `days - 1` days ago to today, as GET /me/usage and /admin/usage take them. */
export function lastDays(days: number, now = Date.now()): { from: string; to: string } {
  const day = (at: number) => new Date(at).toISOString().slice(0, 10);
  return { from: day(now - (days - 1) * 86_400_000), to: day(now) };
}

/** The sum of some days' usage (GET /admin/usage lists days, without their total). */
export function totalOf(days: readonly UsageCounts[]): UsageCounts {
  const total: UsageCounts = {
    read: 0,
    write: 0,
    stream: 0,
    streamMinutes: 0,
    export: 0,
    import: 0,
    bytesIn: 0,
    bytesOut: 0,
    webhookEvents: 0,
  };
  for (const counts of days)
    for (const key of Object.keys(total) as (keyof UsageCounts)[]) total[key] += counts[key];
  // Minutes are kept to the millisecond: a sum of them, too.
  total.streamMinutes = Math.round(total.streamMinutes * 1000) / 1000;
  return total;
}

/** A tenant's usage per UTC day, and the range's total (docs/usage.md). */
export function UsageTable(props: {
  days: readonly (UsageCounts & { day: string })[];
  total: UsageCounts;
  caption: string;
  emptyText: string;
}) {
  if (props.days.length === 0) return <p className="empty">{props.emptyText}</p>;
  const rows = [...props.days, { ...props.total, day: 'Total' }];
  return (
    <ListTable
      rows={rows}
      rowKey={(row) => row.day}
      caption={{ text: props.caption }}
      className="wide"
      region={props.caption}
      columns={[
        { header: 'Day (UTC)', rowHeader: true, cell: (row) => row.day },
        { header: 'Reads', cell: (row) => row.read },
        { header: 'Writes', cell: (row) => row.write },
        { header: 'Streams', cell: (row) => row.stream },
        { header: 'Stream minutes', cell: (row) => row.streamMinutes },
        { header: 'Exports', cell: (row) => row.export },
        { header: 'Imports', cell: (row) => row.import },
        { header: 'Bytes in', cell: (row) => bytes(row.bytesIn) },
        { header: 'Bytes out', cell: (row) => bytes(row.bytesOut) },
        { header: 'Webhook events', cell: (row) => row.webhookEvents },
      ]}
    />
  );
}
