import { useState, type FormEvent } from 'react';
import { unwrap, useApi } from '../../api';
import { Link, navigate, segment } from '../../router';
import { ActionError, useAction } from '../../ui/action';
import { Async, useLoad } from '../../ui/async';
import { Confirm } from '../../ui/confirm';
import { Pager, nextCursor, usePager, when } from './shared';

const PAGE = 25;

/** The operator's users by subject: all of them, or those whose email starts with what was typed. */
export function AdminUsersView() {
  const { client } = useApi();
  const [draft, setDraft] = useState('');
  const [email, setEmail] = useState('');
  const pager = usePager();
  const users = useLoad(
    async (signal) => {
      const query = {
        limit: PAGE,
        ...(email !== '' ? { emailPrefix: email } : {}),
        ...(pager.after ? { after: { subject: pager.after } } : {}),
      };
      const result = await client.GET('/admin/users', { params: { query }, signal });
      const list = (await unwrap(Promise.resolve(result))) ?? [];
      return { list, next: nextCursor(result.response, 'after[subject]') };
    },
    [client, email, pager.after],
  );
  const search = (event: FormEvent) => {
    event.preventDefault();
    pager.first();
    setEmail(draft.trim());
  };
  return (
    <section aria-labelledby="users-title">
      <h1 id="users-title">Users</h1>
      <form className="toolbar" role="search" aria-label="Find users" onSubmit={search}>
        <label htmlFor="user-email">Email starts with</label>
        <input
          id="user-email"
          type="search"
          value={draft}
          placeholder="ada@"
          onChange={(event) => setDraft(event.target.value)}
        />
        <button type="submit">Search</button>
        {email !== '' && (
          <button
            type="button"
            onClick={() => {
              setDraft('');
              setEmail('');
              pager.first();
            }}
          >
            Show all
          </button>
        )}
      </form>
      <Async
        loaded={users}
        empty={(page) => page.list.length === 0}
        emptyText={email !== '' ? `No user's email starts with ${email}.` : 'No users yet.'}
      >
        {(page) => (
          <>
            <div className="table-wrap">
              <table className="ops-table">
                <thead>
                  <tr>
                    <th scope="col">Subject</th>
                    <th scope="col">Email</th>
                    <th scope="col">Registered</th>
                  </tr>
                </thead>
                <tbody>
                  {page.list.map((user) => (
                    <tr key={user.subject}>
                      <td className="mono">
                        <Link to={`/admin/users/${segment(user.subject)}`}>{user.subject}</Link>
                      </td>
                      <td>{user.email}</td>
                      <td>{when(user.createdAt)}</td>
                    </tr>
                  ))}
                </tbody>
              </table>
            </div>
            <Pager pager={pager} next={page.next} label="Users" />
          </>
        )}
      </Async>
    </section>
  );
}

/** One user: profile, keys, teams and quota use; and the erasure of all of it. */
export function AdminUserView(props: { subject: string }) {
  const { client } = useApi();
  const { subject } = props;
  const user = useLoad(
    (signal) =>
      unwrap(client.GET('/admin/users/{subject}', { params: { path: { subject } }, signal })),
    [client, subject],
  );
  const [asking, setAsking] = useState(false);
  const erase = useAction(async () => {
    const erasure = await unwrap(
      client.DELETE('/admin/users/{subject}', { params: { path: { subject } } }),
    );
    setAsking(false);
    navigate(`/admin/erasures/${segment(erasure.id)}`);
  });
  return (
    <section aria-labelledby="user-title">
      <p>
        <Link to="/admin/users">← Users</Link>
      </p>
      <h1 id="user-title">
        User <span className="mono">{subject}</span>
      </h1>
      <Async loaded={user}>
        {(detail) => (
          <>
            <dl className="facts">
              <div>
                <dt>Email</dt>
                <dd>{detail.profile.email}</dd>
              </div>
              <div>
                <dt>Registered</dt>
                <dd>{when(detail.profile.createdAt)}</dd>
              </div>
              <div>
                <dt>Collections</dt>
                <dd>
                  {detail.quota.collections
                    ? `${detail.quota.collections.used} of ${detail.quota.collections.limit}`
                    : '—'}
                </dd>
              </div>
            </dl>
            <h2>Keys</h2>
            {detail.keys.length === 0 ? (
              <p className="empty">No keys.</p>
            ) : (
              <div className="table-wrap">
                <table className="ops-table">
                  <thead>
                    <tr>
                      <th scope="col">Name</th>
                      <th scope="col">Prefix</th>
                      <th scope="col">Kind</th>
                      <th scope="col">Branch</th>
                      <th scope="col">Created</th>
                    </tr>
                  </thead>
                  <tbody>
                    {detail.keys.map((key) => (
                      <tr key={key.id}>
                        <td>{key.name || '—'}</td>
                        <td className="mono">{key.prefix}…</td>
                        <td>{key.kind}</td>
                        <td>{key.branch === null ? 'any' : key.branch || 'standard'}</td>
                        <td>{when(key.createdAt)}</td>
                      </tr>
                    ))}
                  </tbody>
                </table>
              </div>
            )}
            <h2>Teams</h2>
            {detail.teams.length === 0 ? (
              <p className="empty">Not a member of any team.</p>
            ) : (
              <ul>
                {detail.teams.map((team) => (
                  <li key={team.teamId}>
                    {team.name} ({team.role})
                  </li>
                ))}
              </ul>
            )}
            <h2>Erasure</h2>
            <p className="hint">
              Deletes the user&apos;s profiles, every key, its projects, collections, files and team
              memberships.
            </p>
            <button type="button" className="danger" onClick={() => setAsking(true)}>
              Erase user
            </button>
            <ActionError error={erase.error} />
            <Confirm
              open={asking}
              title={`Erase the user ${detail.profile.email}?`}
              confirmLabel="Erase user"
              onConfirm={() => erase.run()}
              onCancel={() => setAsking(false)}
            >
              <p>
                Everything of <strong>{detail.profile.email}</strong> (
                <span className="mono">{subject}</span>) is deleted for good: profiles, keys,
                projects, collections in every branch, files and team memberships. Its keys stop
                working at once.
              </p>
            </Confirm>
          </>
        )}
      </Async>
    </section>
  );
}
