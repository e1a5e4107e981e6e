import { useState, type FormEvent } from 'react';
import { unwrap, useApi } from '../../api';
import { Link, navigate, segment } from '../../router';
import { ActionError, useConfirmedAction } from '../../ui/action';
import { Async, useLoad } from '../../ui/async';
import { Confirm } from '../../ui/confirm';
import { ListTable } from '../../ui/list-table';
import { UserPlans } from './admin-user-plans';
import { Pager, pageOf, usePager, when } from './shared';

const PAGE = 25;

/** The operator's users by subject: all of them, or those whose email starts with what was typed. */
export function AdminUsersView() {
  const { client } = useApi();
  const [draft, setDraft] = useState('');
  const [email, setEmail] = useState('');
  const pager = usePager();
  const users = useLoad(
    (signal) => {
      const query = {
        limit: PAGE,
        ...(email !== '' ? { emailPrefix: email } : {}),
        ...(pager.after ? { after: pager.after } : {}),
      };
      return pageOf(client.GET('/admin/users', { params: { query }, signal }));
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
      <Async loaded={users}>
        {(page) => (
          <ListTable
            rows={page.list}
            rowKey={(user) => user.subject}
            emptyText={email !== '' ? `No user's email starts with ${email}.` : 'No users yet.'}
            className="ops-table"
            columns={[
              {
                header: 'Subject',
                className: 'mono',
                cell: (user) => (
                  <Link to={`/admin/users/${segment(user.subject)}`}>{user.subject}</Link>
                ),
              },
              { header: 'Email', cell: (user) => user.email },
              { header: 'Registered', cell: (user) => when(user.createdAt) },
            ]}
            footer={<Pager pager={pager} next={page.next} label="Users" />}
          />
        )}
      </Async>
    </section>
  );
}

/** One user: profile, plans, limits and usage, keys, teams; and the erasure of all of it. */
export function AdminUserView(props: { subject: string }) {
  const { client } = useApi();
  const { subject } = props;
  const user = useLoad(
    (signal) =>
      unwrap(client.GET('/admin/users/{subject}', { params: { path: { subject } }, signal })),
    [client, subject],
  );
  const erase = useConfirmedAction(async (subject: string) => {
    const erasure = await unwrap(
      client.DELETE('/admin/users/{subject}', { params: { path: { subject } } }),
    );
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
            <UserPlans
              subject={subject}
              entries={detail.profile.plans}
              collections={detail.quota.collections}
              onSaved={user.reload}
            />
            <h2>Keys</h2>
            <ListTable
              rows={detail.keys}
              rowKey={(key) => key.id}
              emptyText="No keys."
              className="ops-table"
              columns={[
                { header: 'Name', cell: (key) => key.name || '—' },
                { header: 'Prefix', className: 'mono', cell: (key) => `${key.prefix}…` },
                { header: 'Kind', cell: (key) => key.kind },
                {
                  header: 'Branch',
                  cell: (key) => (key.branch === null ? 'any' : key.branch || 'standard'),
                },
                { header: 'Created', cell: (key) => when(key.createdAt) },
              ]}
            />
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
            <button type="button" className="danger" onClick={() => erase.ask(subject)}>
              Erase user
            </button>
            <ActionError error={erase.error} />
            <Confirm
              {...erase.dialog}
              title={`Erase the user ${detail.profile.email}?`}
              confirmLabel="Erase user"
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
