import { unwrap, useApi } from '../../api';
import { Async, useLoad } from '../../ui/async';
import { ListTable } from '../../ui/list-table';
import { LIMITS } from '../plans';
import { bytes, when } from './shared';

/**
 * The plan catalogue (GET /admin/plans): each plan with the limits it sets; a limit it leaves out
 * is the deployment's, shown in brackets. Plans are defined through PUT /admin/plans/{planName}.
 */
export function AdminPlansView() {
  const { client, me } = useApi();
  const plans = useLoad(
    async (signal) => (await unwrap(client.GET('/admin/plans', { signal }))) ?? [],
    [client],
  );
  const shown = (value: number | null, inBytes: boolean | undefined) =>
    value === null ? 'none' : inBytes ? bytes(value) : String(value);
  return (
    <section aria-labelledby="plans-title">
      <h1 id="plans-title">Plans</h1>
      <p className="hint">
        Users and teams hold plans by name, from a start until an end; the limits a plan leaves out
        are the deployment&apos;s (in brackets).
      </p>
      <Async loaded={plans}>
        {(list) => (
          <ListTable
            rows={list}
            rowKey={(plan) => plan.name}
            emptyText="No plans yet: every tenant has the deployment's limits."
            className="wide"
            label="Plans"
            region="Plans"
            columns={[
              { header: 'Plan', rowHeader: true, className: 'mono', cell: (plan) => plan.name },
              ...LIMITS.map((limit) => ({
                header: limit.label,
                cell: (plan: (typeof list)[number]) => {
                  const set = plan.limits[limit.name];
                  return set === undefined
                    ? `(${shown(me.limits[limit.name].limit, limit.bytes)})`
                    : shown(set, limit.bytes);
                },
              })),
              { header: 'Version', cell: (plan) => plan.version },
              { header: 'Updated', cell: (plan) => when(plan.updatedAt) },
            ]}
          />
        )}
      </Async>
    </section>
  );
}
