import { useState } from 'react';
import { unwrap, useApi } from '../../api';
import { Async, useLoad } from '../../ui/async';
import { Pager, nextCursor, usePager, when } from './shared';

const PAGE = 25;

/** Every team by id, and the members of the one opened. */
export function AdminTeamsView() {
  const { client } = useApi();
  const pager = usePager();
  const [open, setOpen] = useState<string | undefined>(undefined);
  const teams = useLoad(
    async (signal) => {
      const query = { limit: PAGE, ...(pager.after ? { after: { id: pager.after } } : {}) };
      const result = await client.GET('/admin/teams', { params: { query }, signal });
      const list = (await unwrap(Promise.resolve(result))) ?? [];
      return { list, next: nextCursor(result.response, 'after[id]') };
    },
    [client, pager.after],
  );
  return (
    <section aria-labelledby="teams-title">
      <h1 id="teams-title">Teams</h1>
      <Async loaded={teams} empty={(page) => page.list.length === 0} emptyText="No teams yet.">
        {(page) => (
          <>
            <div className="table-wrap">
              <table className="ops-table">
                <thead>
                  <tr>
                    <th scope="col">Name</th>
                    <th scope="col">Id</th>
                    <th scope="col">Created</th>
                    <th scope="col">Members</th>
                  </tr>
                </thead>
                <tbody>
                  {page.list.map((team) => (
                    <tr key={team.id}>
                      <td>{team.name}</td>
                      <td className="mono">{team.id}</td>
                      <td>{when(team.createdAt)}</td>
                      <td>
                        <button
                          type="button"
                          aria-expanded={open === team.id}
                          aria-label={`Members of ${team.name}`}
                          onClick={() => setOpen(open === team.id ? undefined : team.id)}
                        >
                          {open === team.id ? 'Hide members' : 'Show members'}
                        </button>
                      </td>
                    </tr>
                  ))}
                </tbody>
              </table>
            </div>
            <Pager pager={pager} next={page.next} label="Teams" />
          </>
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
            {detail.members.length === 0 ? (
              <p className="empty">No members.</p>
            ) : (
              <div className="table-wrap">
                <table className="ops-table">
                  <thead>
                    <tr>
                      <th scope="col">Subject</th>
                      <th scope="col">Role</th>
                      <th scope="col">Since</th>
                    </tr>
                  </thead>
                  <tbody>
                    {detail.members.map((member) => (
                      <tr key={member.subject}>
                        <td className="mono">{member.subject}</td>
                        <td>{member.role}</td>
                        <td>{when(member.createdAt)}</td>
                      </tr>
                    ))}
                  </tbody>
                </table>
              </div>
            )}
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
      <Async
        loaded={clusters}
        empty={(list) => list.length === 0}
        emptyText="No data clusters are configured: every tenant is in the main database."
      >
        {(list) => (
          <div className="table-wrap">
            <table className="ops-table">
              <thead>
                <tr>
                  <th scope="col">Cluster</th>
                  <th scope="col">Region</th>
                  <th scope="col">Open for new tenants</th>
                  <th scope="col">Reachable</th>
                  <th scope="col">Tenants</th>
                  <th scope="col">Collections</th>
                </tr>
              </thead>
              <tbody>
                {list.map((cluster) => (
                  <tr key={cluster.name}>
                    <td>{cluster.name}</td>
                    <td>{cluster.region}</td>
                    <td>{cluster.open ? 'yes' : 'no'}</td>
                    <td>{cluster.reachable ? 'yes' : 'no'}</td>
                    <td>{cluster.tenants}</td>
                    <td>{cluster.collections}</td>
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
        )}
      </Async>
    </section>
  );
}
