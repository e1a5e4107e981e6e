import { useState, type FormEvent } from 'react';
import type { Schemas } from '@profile-data/client';
import { unwrap, useApi } from '../../api';
import { Link, segment } from '../../router';
import { ActionError, useAction, useConfirmedAction } from '../../ui/action';
import { Async, useLoad } from '../../ui/async';
import { Confirm } from '../../ui/confirm';
import { ListTable } from '../../ui/list-table';
import { CopyField, when } from './shared';

type Webhook = Schemas['WebhookDto'];
type EventType = Webhook['events'][number];
const EVENT_TYPES: EventType[] = ['created', 'updated', 'deleted'];

/** The namespace's webhooks: list, register, remove, and a link to each one's deliveries. */
export function WebhooksView() {
  const { client } = useApi();
  const list = useLoad(
    async (signal) => (await unwrap(client.GET('/webhooks', { signal }))) ?? [],
    [client],
  );
  const remove = useConfirmedAction(async (webhook: Webhook) => {
    await unwrap(client.DELETE('/webhooks/{id}', { params: { path: { id: webhook.id } } }));
    list.reload();
  });
  return (
    <section aria-labelledby="webhooks-title">
      <h1 id="webhooks-title">Webhooks</h1>
      <CreateWebhook onCreated={list.reload} />
      <h2>Registered endpoints</h2>
      <ActionError error={remove.error} />
      <Async loaded={list}>
        {(hooks) => (
          <ListTable
            rows={hooks}
            rowKey={(hook) => hook.id}
            emptyText="No webhooks yet."
            className="ops-table"
            columns={[
              { header: 'URL', className: 'mono', cell: (hook) => hook.url },
              { header: 'Events', cell: (hook) => hook.events.join(', ') },
              { header: 'Collection', cell: (hook) => hook.collection ?? 'all' },
              { header: 'State', cell: (hook) => webhookState(hook) },
              { header: 'Created', cell: (hook) => when(hook.createdAt) },
              {
                header: 'Actions',
                className: 'row-actions',
                cell: (hook) => (
                  <>
                    <Link to={`/webhooks/${segment(hook.id)}`}>
                      Deliveries<span className="visually-hidden"> of {hook.url}</span>
                    </Link>
                    <button
                      type="button"
                      className="danger"
                      aria-label={`Delete the webhook ${hook.url}`}
                      onClick={() => remove.ask(hook)}
                    >
                      Delete
                    </button>
                  </>
                ),
              },
            ]}
          />
        )}
      </Async>
      <Confirm {...remove.dialog} title="Delete the webhook?" confirmLabel="Delete webhook">
        <p>
          <span className="mono">{remove.target?.url}</span> receives no further events, and its
          pending deliveries are dropped.
        </p>
      </Confirm>
    </section>
  );
}

function webhookState(hook: Webhook): string {
  if (hook.disabledAt) return `disabled since ${when(hook.disabledAt)}`;
  if (hook.failingSince) return `failing since ${when(hook.failingSince)}`;
  return 'active';
}

function CreateWebhook(props: { onCreated: () => void }) {
  const { client } = useApi();
  const [url, setUrl] = useState('');
  const [events, setEvents] = useState<EventType[]>(['created', 'updated', 'deleted']);
  const [collection, setCollection] = useState('');
  const [created, setCreated] = useState<{ url: string; secret: string } | undefined>();
  const create = useAction(async () => {
    const body = {
      url: url.trim(),
      events,
      ...(collection.trim() !== '' ? { collection: collection.trim() } : {}),
    };
    const made = await unwrap(client.POST('/webhooks', { body }));
    setCreated({ url: made.webhook.url, secret: made.secret });
    setUrl('');
    props.onCreated();
  });
  const submit = (event: FormEvent) => {
    event.preventDefault();
    create.run();
  };
  return (
    <form className="panel" aria-labelledby="webhook-create-title" onSubmit={submit}>
      <h2 id="webhook-create-title">Register an endpoint</h2>
      <div className="form-grid">
        <label htmlFor="webhook-url">Endpoint URL</label>
        <input
          id="webhook-url"
          type="url"
          required
          placeholder="https://hooks.example.com/pds"
          value={url}
          onChange={(event) => setUrl(event.target.value)}
        />
        <label htmlFor="webhook-collection">Collection (optional)</label>
        <input
          id="webhook-collection"
          value={collection}
          placeholder="every collection"
          onChange={(event) => setCollection(event.target.value)}
        />
      </div>
      <fieldset>
        <legend>Events</legend>
        <div className="choices">
          {EVENT_TYPES.map((type) => (
            <label key={type} className="choice">
              <input
                type="checkbox"
                checked={events.includes(type)}
                onChange={(event) =>
                  setEvents((now) =>
                    event.target.checked ? [...now, type] : now.filter((each) => each !== type),
                  )
                }
              />
              {type}
            </label>
          ))}
        </div>
      </fieldset>
      <div className="toolbar">
        <button type="submit" className="primary" disabled={create.busy || events.length === 0}>
          {create.busy ? 'Registering…' : 'Register webhook'}
        </button>
      </div>
      <ActionError error={create.error} />
      {created && (
        <CopyField
          id="webhook-secret"
          label={`Signing secret of ${created.url}`}
          value={created.secret}
          note="It verifies the deliveries' signatures. It will not be shown again."
        />
      )}
    </form>
  );
}
