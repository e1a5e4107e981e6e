import { useId, useState, type FormEvent } from 'react';
import { unwrap, useApi } from '../../api';
import { ActionError, useAction, useConfirmedAction } from '../../ui/action';
import { Async, useLoad } from '../../ui/async';
import { Confirm } from '../../ui/confirm';
import { ListTable } from '../../ui/list-table';
import { ExplainPanel } from './explain';
import type { ItemQuery } from './query';

/** A collection's indexes: list, create, drop; and the explain panel of the items query. */
export function IndexesTab(props: { collection: string; query: ItemQuery }) {
  const { client } = useApi();
  const { collection } = props;
  const path = { collection };
  const indexes = useLoad(
    async () => unwrap(client.GET('/data/{collection}/index', { params: { path } })),
    [client, collection],
  );
  const drop = useConfirmedAction(
    async (name: string) => {
      await unwrap(client.DELETE('/data/{collection}/index', { params: { path }, body: { name } }));
      indexes.reload();
    },
    { close: 'at-once' },
  );
  return (
    <>
      <h2>Indexes</h2>
      <ActionError error={drop.error} />
      <Async loaded={indexes}>
        {(list) => (
          <ListTable
            rows={list}
            rowKey={(index) => index.name}
            emptyText="No indexes yet."
            label="Indexes"
            columns={[
              { header: 'Name', rowHeader: true, cell: (index) => index.name },
              {
                header: 'Fields',
                cell: (index) =>
                  Object.entries(index.fields)
                    .map(([field, order]) => `${field} ${order === 1 ? '↑' : '↓'}`)
                    .join(', '),
              },
              { header: 'Unique', cell: (index) => (index.unique ? 'yes' : 'no') },
              {
                header: <span className="visually-hidden">Actions</span>,
                cell: (index) =>
                  index.name !== '_id_' && (
                    <button
                      type="button"
                      className="danger"
                      aria-label={`Drop index ${index.name}`}
                      onClick={() => drop.ask(index.name)}
                    >
                      Drop
                    </button>
                  ),
              },
            ]}
          />
        )}
      </Async>
      <Confirm {...drop.dialog} title="Drop this index?" confirmLabel="Drop index">
        <p>
          The index <code>{drop.target}</code> of {collection} is dropped; queries that used it scan
          instead.
        </p>
      </Confirm>
      <CreateIndexForm collection={collection} onCreated={indexes.reload} />
      <ExplainPanel collection={collection} query={props.query} onIndexCreated={indexes.reload} />
    </>
  );
}

function CreateIndexForm(props: { collection: string; onCreated: () => void }) {
  const { client } = useApi();
  const id = useId();
  const [fields, setFields] = useState('');
  const [unique, setUnique] = useState(false);
  const [name, setName] = useState('');
  const create = useAction(async () => {
    const spec: Record<string, 1 | -1> = {};
    for (const part of fields.split(',').map((each) => each.trim())) {
      if (part === '' || part === '-') continue;
      if (part.startsWith('-')) spec[part.slice(1)] = -1;
      else spec[part] = 1;
    }
    if (Object.keys(spec).length === 0) throw new Error('Name at least one field.');
    await unwrap(
      client.POST('/data/{collection}/index', {
        params: { path: { collection: props.collection } },
        body: { fields: spec, unique, ...(name.trim() !== '' ? { name: name.trim() } : {}) },
      }),
    );
    setFields('');
    setName('');
    setUnique(false);
    props.onCreated();
  });
  const submit = (event: FormEvent) => {
    event.preventDefault();
    create.run();
  };
  return (
    <form className="data-form" onSubmit={submit} aria-labelledby={`${id}-title`}>
      <h2 id={`${id}-title`}>New index</h2>
      <div className="toolbar">
        <label htmlFor={`${id}-fields`}>Index fields</label>
        <input
          id={`${id}-fields`}
          value={fields}
          required
          placeholder="status,-total"
          aria-describedby={`${id}-hint`}
          onChange={(event) => setFields(event.target.value)}
        />
        <label htmlFor={`${id}-name`}>Index name</label>
        <input
          id={`${id}-name`}
          value={name}
          placeholder="(default)"
          onChange={(event) => setName(event.target.value)}
        />
        <input
          id={`${id}-unique`}
          type="checkbox"
          checked={unique}
          onChange={(event) => setUnique(event.target.checked)}
        />
        <label htmlFor={`${id}-unique`}>Unique</label>
        <button type="submit" className="primary" disabled={create.busy}>
          Create index
        </button>
      </div>
      <p className="hint" id={`${id}-hint`}>
        Fields in order, comma-separated; a leading - makes a field descending.
      </p>
      <ActionError error={create.error} />
    </form>
  );
}
