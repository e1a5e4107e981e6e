import { useState, type FormEvent } from 'react';
import type { Schemas } from '../../../../client/src';
import { unwrap, useApi } from '../../api';
import { ActionError, useAction } from '../../ui/action';
import { Async, useLoad } from '../../ui/async';
import { Confirm } from '../../ui/confirm';
import { CopyField, when } from './shared';

type ApiKey = Schemas['ApiKeyDto'];

/**
 * API keys: a root key manages the user's keys (GET/POST/DELETE /api-keys) and, for the teams it
 * is an admin of, the team's keys (/teams/{id}/api-keys). Secrets are shown once, at minting.
 */
export function KeysView() {
  const { client, me } = useApi();
  const [owner, setOwner] = useState('');
  const teams = useLoad(
    async (signal) =>
      ((await unwrap(client.GET('/teams', { signal }))) ?? []).filter((t) => t.role === 'admin'),
    [client],
  );
  const keys = useLoad(
    async (signal): Promise<ApiKey[]> =>
      owner === ''
        ? ((await unwrap(client.GET('/api-keys', { signal }))) ?? [])
        : ((await unwrap(
            client.GET('/teams/{id}/api-keys', { params: { path: { id: owner } }, signal }),
          )) ?? []),
    [client, owner],
  );
  const [doomed, setDoomed] = useState<ApiKey | undefined>(undefined);
  const revoke = useAction(async (key: ApiKey) => {
    if (owner === '')
      await unwrap(client.DELETE('/api-keys/{id}', { params: { path: { id: key.id } } }));
    else
      await unwrap(
        client.DELETE('/teams/{id}/api-keys/{keyId}', {
          params: { path: { id: owner, keyId: key.id } },
        }),
      );
    setDoomed(undefined);
    keys.reload();
  });
  const adminTeams = teams.state === 'ready' ? teams.data : [];
  const ownerName =
    owner === ''
      ? 'your user'
      : `the team ${adminTeams.find((t) => t.teamId === owner)?.name ?? owner}`;

  return (
    <section aria-labelledby="keys-title">
      <h1 id="keys-title">API keys</h1>
      {adminTeams.length > 0 && (
        <div className="toolbar">
          <label htmlFor="keys-owner">Keys of</label>
          <select id="keys-owner" value={owner} onChange={(event) => setOwner(event.target.value)}>
            <option value="">my user</option>
            {adminTeams.map((team) => (
              <option key={team.teamId} value={team.teamId}>
                the team {team.name}
              </option>
            ))}
          </select>
        </div>
      )}
      <MintKey key={owner} team={owner} ownerName={ownerName} onMinted={keys.reload} />
      <h2>Keys of {ownerName}</h2>
      <ActionError error={revoke.error} />
      <Async loaded={keys} empty={(list) => list.length === 0} emptyText="No keys.">
        {(list) => (
          <div className="table-wrap">
            <table className="ops-table">
              <thead>
                <tr>
                  <th scope="col">Name</th>
                  <th scope="col">Prefix</th>
                  <th scope="col">Kind</th>
                  <th scope="col">Branch</th>
                  <th scope="col">Expires</th>
                  <th scope="col">Created</th>
                  <th scope="col">Actions</th>
                </tr>
              </thead>
              <tbody>
                {list.map((key) => (
                  <tr key={key.id}>
                    <td>
                      {key.name || '—'}
                      {key.id === me.key?.id && <strong> (signed in with this key)</strong>}
                    </td>
                    <td className="mono">{key.prefix}…</td>
                    <td>
                      {key.kind}
                      {key.kind === 'sub' ? ` (${key.clientId} / ${key.accountId})` : ''}
                    </td>
                    <td>{key.branch === null ? 'any' : key.branch || 'standard'}</td>
                    <td>{key.expiresAt ? when(key.expiresAt) : 'never'}</td>
                    <td>{when(key.createdAt)}</td>
                    <td>
                      <button
                        type="button"
                        className="danger"
                        aria-label={`Revoke the key ${key.name || key.prefix}`}
                        onClick={() => setDoomed(key)}
                      >
                        Revoke
                      </button>
                    </td>
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
        )}
      </Async>
      <Confirm
        open={doomed !== undefined}
        title="Revoke the key?"
        confirmLabel="Revoke key"
        onConfirm={() => doomed && revoke.run(doomed)}
        onCancel={() => setDoomed(undefined)}
      >
        <p>
          The key {doomed?.name ? `“${doomed.name}” ` : ''}
          <span className="mono">{doomed?.prefix}…</span> stops working with the next request. This
          cannot be undone.
          {doomed?.id === me.key?.id && (
            <strong>
              {' '}
              It is the key this console is signed in with: the console stops working.
            </strong>
          )}
        </p>
      </Confirm>
    </section>
  );
}

function MintKey(props: { team: string; ownerName: string; onMinted: () => void }) {
  const { client } = useApi();
  const [name, setName] = useState('');
  const [expiresAt, setExpiresAt] = useState('');
  const [secret, setSecret] = useState<string | undefined>(undefined);
  const mint = useAction(async () => {
    const body = {
      ...(name.trim() !== '' ? { name: name.trim() } : {}),
      ...(expiresAt !== '' ? { expiresAt: new Date(expiresAt).toISOString() } : {}),
    };
    const issued =
      props.team === ''
        ? await unwrap(client.POST('/api-keys', { body }))
        : await unwrap(
            client.POST('/teams/{id}/api-keys', { params: { path: { id: props.team } }, body }),
          );
    setSecret(issued.apiKey);
    setName('');
    setExpiresAt('');
    props.onMinted();
  });
  const submit = (event: FormEvent) => {
    event.preventDefault();
    setSecret(undefined);
    mint.run();
  };
  return (
    <form className="panel" aria-labelledby="mint-title" onSubmit={submit}>
      <h2 id="mint-title">Mint a key for {props.ownerName}</h2>
      <div className="form-grid">
        <label htmlFor="mint-name">Name</label>
        <input
          id="mint-name"
          maxLength={100}
          value={name}
          placeholder="ci pipeline"
          onChange={(event) => setName(event.target.value)}
        />
        <label htmlFor="mint-expires">Expires (optional)</label>
        <input
          id="mint-expires"
          type="datetime-local"
          value={expiresAt}
          onChange={(event) => setExpiresAt(event.target.value)}
        />
      </div>
      <div className="toolbar">
        <button type="submit" className="primary" disabled={mint.busy}>
          {mint.busy ? 'Minting…' : 'Mint key'}
        </button>
      </div>
      <ActionError error={mint.error} />
      {secret && (
        <CopyField
          id="minted-secret"
          label="The new key"
          value={secret}
          note="Store it now: it will not be shown again."
        />
      )}
    </form>
  );
}
