import { useState, type FormEvent } from 'react';
import type { Schemas } from '@profile-data/client';
import { unwrap, useApi } from '../../api';
import { ActionError, useAction, useConfirmedAction } from '../../ui/action';
import { Async, useLoad } from '../../ui/async';
import { Confirm } from '../../ui/confirm';
import { ListTable } from '../../ui/list-table';
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
  const revoke = useConfirmedAction(async (key: ApiKey) => {
    if (owner === '')
      await unwrap(client.DELETE('/api-keys/{id}', { params: { path: { id: key.id } } }));
    else
      await unwrap(
        client.DELETE('/teams/{id}/api-keys/{keyId}', {
          params: { path: { id: owner, keyId: key.id } },
        }),
      );
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
      <Async loaded={keys}>
        {(list) => (
          <ListTable
            rows={list}
            rowKey={(key) => key.id}
            emptyText="No keys."
            className="ops-table"
            columns={[
              {
                header: 'Name',
                cell: (key) => (
                  <>
                    {key.name || '—'}
                    {key.id === me.key?.id && <strong> (signed in with this key)</strong>}
                  </>
                ),
              },
              { header: 'Prefix', className: 'mono', cell: (key) => `${key.prefix}…` },
              {
                header: 'Kind',
                cell: (key) =>
                  key.kind === 'sub'
                    ? `${key.kind} (${key.clientId} / ${key.accountId})`
                    : key.kind,
              },
              {
                header: 'Branch',
                cell: (key) => (key.branch === null ? 'any' : key.branch || 'standard'),
              },
              {
                header: 'Expires',
                cell: (key) => (key.expiresAt ? when(key.expiresAt) : 'never'),
              },
              { header: 'Created', cell: (key) => when(key.createdAt) },
              {
                header: 'Actions',
                cell: (key) => (
                  <button
                    type="button"
                    className="danger"
                    aria-label={`Revoke the key ${key.name || key.prefix}`}
                    onClick={() => revoke.ask(key)}
                  >
                    Revoke
                  </button>
                ),
              },
            ]}
          />
        )}
      </Async>
      <Confirm {...revoke.dialog} title="Revoke the key?" confirmLabel="Revoke key">
        <p>
          The key {revoke.target?.name ? `“${revoke.target.name}” ` : ''}
          <span className="mono">{revoke.target?.prefix}…</span> stops working with the next
          request. This cannot be undone.
          {revoke.target?.id === me.key?.id && (
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
