import { useId, useState, type FormEvent } from 'react';
import { unwrap, useApi } from '../../api';
import type { Schemas } from '@profile-data/client';
import { ActionError, useAction } from '../../ui/action';

/** Parses the text of a JSON object, or says why it is not one. */
/** An item body as the API types it: JSON values. */
export type ItemBody = Schemas['CreateDataItemDto']['item'];

export function parseObject(text: string): ItemBody {
  const value: unknown = JSON.parse(text);
  if (typeof value !== 'object' || value === null || Array.isArray(value))
    throw new Error('The item must be a JSON object: {"field": "value"}.');
  return { ...value };
}

/**
 * A new item, written as JSON: POST /data/{c}. The first item of a name creates its collection,
 * so with `pickCollection` this form also makes new collections.
 */
export function NewItemForm(props: {
  collection?: string;
  onCreated: (collection: string, id: string) => void;
}) {
  const { client } = useApi();
  const id = useId();
  const [collection, setCollection] = useState('');
  const [text, setText] = useState('{\n  \n}');
  const [created, setCreated] = useState<string | undefined>(undefined);
  const target = props.collection ?? collection.trim();
  const create = useAction(async () => {
    setCreated(undefined);
    const item = parseObject(text);
    const stored = await unwrap(
      client.POST('/data/{collection}', {
        params: { path: { collection: target } },
        body: { item },
      }),
    );
    setCreated(stored._id);
    props.onCreated(target, stored._id);
  });
  const submit = (event: FormEvent) => {
    event.preventDefault();
    create.run();
  };
  return (
    <form className="data-form" onSubmit={submit} aria-labelledby={`${id}-title`}>
      <h2 id={`${id}-title`}>
        {props.collection === undefined ? 'New item in collection …' : 'New item'}
      </h2>
      {props.collection === undefined && (
        <div className="field">
          <label htmlFor={`${id}-collection`}>Collection</label>
          <input
            id={`${id}-collection`}
            value={collection}
            required
            pattern="[A-Za-z][A-Za-z0-9_\-]{0,63}"
            title="A letter, then letters, digits, _ or -; at most 64 characters"
            onChange={(event) => setCollection(event.target.value)}
          />
        </div>
      )}
      <div className="field">
        <label htmlFor={`${id}-json`}>Item (JSON)</label>
        <textarea
          id={`${id}-json`}
          rows={5}
          spellCheck={false}
          value={text}
          onChange={(event) => setText(event.target.value)}
        />
      </div>
      <div className="toolbar">
        <button type="submit" className="primary" disabled={create.busy || target === ''}>
          {create.busy ? 'Creating…' : 'Create item'}
        </button>
        {created !== undefined && (
          <span role="status" className="ok">
            Created {created}
          </span>
        )}
      </div>
      <ActionError error={create.error} />
    </form>
  );
}
