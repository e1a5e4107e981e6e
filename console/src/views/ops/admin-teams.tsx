import { useState } from 'react';
import { unwrap, useApi } from '../../api';
import { Async, useLoad } from '../../ui/async';
import { ListTable } from '../../ui/list-table';
import { Pager, pageOf, usePager, when } from './shared';

const PAGE = 25;

/** Every team by id, and the members of the one opened. */
export function AdminTeamsView() {
  const { client } = useApi();
  const pager = usePager();
  const [open, setOpen] = useState<string | undefined>(undefined);
  const teams = useLoad(
    (signal) => {
      const query = { limit: PAGE, ...(pager.after ? { after: pager.after } : {}) };
      return pageOf(client.GET('/admin/teams', { params: { query }, signal }));
    },
    [client, pager.after],
  );
  return (
    <section aria-labelledby="teams-title">
      <h1 id="teams-title">Teams</h1>
      <Async loaded={teams}>
        {(page) => (
          <ListTable
            rows={page.list}
            rowKey={(team) => team.id}
            emptyText="No teams yet."
            className="ops-table"
            columns={[
              { header: 'Name', cell: (team) => team.name },
              { header: 'Id', className: 'mono', cell: (team) => team.id },
              { header: 'Created', cell: (team) => when(team.createdAt) },
              {
                header: 'Members',
                cell: (team) => (
                  <button
                    type="button"
                    aria-expanded={open === team.id}
                    aria-label={`Members of ${team.name}`}
                    onClick={() => setOpen(open === team.id ? undefined : team.id)}
                  >
                    {open === team.id ? 'Hide members' : 'Show members'}
                  </button>
                ),
              },
            ]}
            footer={<Pager pager={pager} next={page.next} label="Teams" />}
          />
        )}
      </Async>
      {open && <TeamMembers key={open} id={open} />}
    </section>
  );
}

function TeamMembers(props: { id: string }) {
  const { client } = useApi();
  const team = useLoad(
    (signal) =>
      unwrap(client.GET('/admin/teams/{id}', { params: { path: { id: props.id } }, signal })),
    [client, props.id],
  );
  return (
    <section className="panel" aria-labelledby="members-title">
      <Async loaded={team}>
        {(detail) => (
          <>
            <h2 id="members-title">Members of {detail.name}</h2>
            <ListTable
              rows={detail.members}
              rowKey={(member) => member.subject}
              emptyText="No members."
              className="ops-table"
              columns={[
                { header: 'Subject', className: 'mono', cell: (member) => member.subject },
                { header: 'Role', cell: (member) => member.role },
                { header: 'Since', cell: (member) => when(member.createdAt) },
              ]}
            />
          </>
        )}
      </Async>
    </section>
  );
}

/** The data clusters with how many tenants and collections each holds. */
export function AdminClustersView() {
  const { client } = useApi();
  const clusters = useLoad(
    async (signal) => (await unwrap(client.GET('/admin/clusters', { signal }))) ?? [],
    [client],
  );
  return (
    <section aria-labelledby="clusters-title">
      <h1 id="clusters-title">Clusters</h1>
      <div className="toolbar">
        <button type="button" onClick={clusters.reload}>
          Refresh
        </button>
      </div>
      <Async loaded={clusters}>
        {(list) => (
          <ListTable
            rows={list}
            rowKey={(cluster) => cluster.name}
            emptyText="No data clusters are configured: every tenant is in the main database."
            className="ops-table"
            columns={[
              { header: 'Cluster', cell: (cluster) => cluster.name },
              { header: 'Region', cell: (cluster) => cluster.region },
              { header: 'Open for new tenants', cell: (cluster) => (cluster.open ? 'yes' : 'no') },
              { header: 'Reachable', cell: (cluster) => (cluster.reachable ? 'yes' : 'no') },
              { header: 'Tenants', cell: (cluster) => cluster.tenants },
              { header: 'Collections', cell: (cluster) => cluster.collections },
            ]}
          />
        )}
      </Async>
    </section>
  );
}
