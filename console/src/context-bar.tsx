import { useState, type FormEvent } from 'react';
import { clientFor, unwrap, useApi, type Me } from './api';
import type { Session } from './session';
import { useLoad } from './ui/async';
import { ProblemView } from './ui/problem';

/**
 * What the key is, and the context it acts in: the branch (X-Branch) — one it has data in or any
 * other name — and, for a member's root key, the team (X-Team). A change is checked with GET /me
 * before the console switches to it.
 */
export function ContextBar(props: { onChange: (session: Session, me: Me) => void }) {
  const { client, session, me } = useApi();
  const [branch, setBranch] = useState(session.branch);
  const [team, setTeam] = useState(session.team);
  const [error, setError] = useState<unknown>(undefined);
  const tenant = me.kind !== 'operator';
  const branches = useLoad(
    async () => (tenant ? ((await unwrap(client.GET('/me/branches'))) ?? []) : []),
    [client],
  );
  // GET /teams is a root key's own read: asked without X-Team even while acting for a team.
  const teams = useLoad(
    async () =>
      me.kind === 'root' || me.actingSubject
        ? ((await unwrap(clientFor({ ...session, team: '' }).GET('/teams'))) ?? [])
        : [],
    [client],
  );

  const apply = (event: FormEvent) => {
    event.preventDefault();
    const next: Session = { ...session, branch: branch.trim(), team };
    setError(undefined);
    unwrap(clientFor(next).GET('/me')).then(
      (nextMe) => props.onChange(next, nextMe),
      (failure: unknown) => setError(failure),
    );
  };

  const who = me.kind === 'operator' ? 'operator' : `${me.kind} · ${me.subject ?? me.teamId ?? ''}`;
  return (
    <div className="context">
      <span className="who" title="The signed-in key">
        {who}
        {me.key ? ` · ${me.key.prefix}…` : ''}
      </span>
      {tenant && (
        <form className="context-form" onSubmit={apply} aria-label="Context">
          {me.boundBranch !== null ? (
            <span>Branch: {me.boundBranch || 'standard'} (the key is bound to it)</span>
          ) : (
            <>
              <label htmlFor="context-branch">Branch</label>
              <input
                id="context-branch"
                list="context-branches"
                value={branch}
                placeholder="standard"
                onChange={(event) => setBranch(event.target.value)}
              />
              <datalist id="context-branches">
                {branches.state === 'ready' &&
                  branches.data.map((each) => (
                    <option key={each.name} value={each.name}>
                      {`${each.name || 'standard'} (${each.collections} collections)`}
                    </option>
                  ))}
              </datalist>
            </>
          )}
          {teams.state === 'ready' && teams.data.length > 0 && (
            <>
              <label htmlFor="context-team">Team</label>
              <select
                id="context-team"
                value={team}
                onChange={(event) => setTeam(event.target.value)}
              >
                <option value="">— my own data —</option>
                {teams.data.map((each) => (
                  <option key={each.teamId} value={each.teamId}>
                    {each.name} ({each.role})
                  </option>
                ))}
              </select>
            </>
          )}
          <button type="submit">Switch</button>
        </form>
      )}
      {error !== undefined && <ProblemView error={error} />}
    </div>
  );
}
