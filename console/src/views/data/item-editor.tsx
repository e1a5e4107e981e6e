import { useEffect, useState } from 'react';
import { ApiProblemError, useApi } from '../../api';
import { problemOf } from '@profile-data/client';
import { Link, segment } from '../../router';
import { ActionError, useAction } from '../../ui/action';
import { Loading } from '../../ui/async';
import { JsonText } from '../../ui/json';
import { ProblemView } from '../../ui/problem';
import { parseObject, type ItemBody } from './new-item';

type Item = Record<string, unknown>;
interface Read {
  item: Item;
  etag: string;
}

const MANAGED = new Set(['_id', '_createdAt', '_updatedAt']);

function same(a: unknown, b: unknown): boolean {
  return JSON.stringify(a) === JSON.stringify(b);
}

/** The top-level fields to `$set` so that `from` becomes `to`; a removed field cannot be. */
function valuesBetween(from: Item, to: ItemBody): ItemBody {
  const removed = Object.keys(from).filter((key) => !MANAGED.has(key) && !(key in to));
  if (removed.length > 0)
    throw new Error(
      `An update sets fields and cannot remove them: set ${removed.join(', ')} to null instead.`,
    );
  const values: ItemBody = {};
  for (const [key, value] of Object.entries(to))
    if (!MANAGED.has(key) && !same(value, from[key])) values[key] = value;
  return values;
}

/**
 * One item as JSON text, edited as JSON and saved with `If-Match: <the ETag read>`. When the item
 * changed meanwhile (412) it shows the current item beside the edit, and the user either reloads
 * (drops the edit) or overwrites (saves the edit again over the current revision, knowingly).
 */
export function ItemEditor(props: { collection: string; id: string }) {
  const { client } = useApi();
  const { collection, id } = props;
  const path = { collection, indexName: '_id', indexValue: id };
  const [read, setRead] = useState<Read | undefined>(undefined);
  const [text, setText] = useState('');
  const [loadError, setLoadError] = useState<unknown>(undefined);
  const [conflict, setConflict] = useState<Read | undefined>(undefined);
  const [saved, setSaved] = useState(false);

  const fetchItem = async (): Promise<Read> => {
    const result = await client.GET('/data/{collection}/{indexName}/{indexValue}', {
      params: { path },
    });
    if (!result.response.ok || !result.data)
      throw new ApiProblemError(result.response.status, problemOf(result.error));
    return { item: result.data, etag: result.response.headers.get('ETag') ?? '' };
  };
  const show = (next: Read) => {
    setRead(next);
    setText(JSON.stringify(next.item, null, 2));
    setConflict(undefined);
  };
  useEffect(() => {
    fetchItem().then(show, setLoadError);
  }, [client, collection, id]);

  /** Saves the edit over `base` (the revision it is meant for). */
  const save = useAction(async (base: Read) => {
    setSaved(false);
    const edit = parseObject(text);
    const values = valuesBetween(base.item, edit);
    if (Object.keys(values).length === 0)
      throw new Error('Nothing changed: there is nothing to save.');
    const result = await client.PUT('/data/{collection}/{indexName}/{indexValue}', {
      params: { path, header: { 'If-Match': base.etag } },
      body: { values },
    });
    if (result.response.status === 412) {
      setConflict(await fetchItem());
      return;
    }
    if (!result.response.ok || !result.data)
      throw new ApiProblemError(result.response.status, problemOf(result.error));
    show({ item: result.data, etag: result.response.headers.get('ETag') ?? '' });
    setSaved(true);
  });
  const reload = useAction(async () => {
    show(await fetchItem());
    setSaved(false);
  });

  const back = (
    <p className="crumbs">
      <Link to="/data">Collections</Link> /{' '}
      <Link to={`/data/${segment(collection)}`}>{collection}</Link> /
    </p>
  );
  if (loadError !== undefined)
    return (
      <section aria-labelledby="item-title">
        {back}
        <h1 id="item-title">Item {id}</h1>
        <ProblemView error={loadError} />
      </section>
    );
  if (!read) return <Loading />;
  let edited: Item | undefined;
  try {
    edited = parseObject(text);
  } catch {
    edited = undefined;
  }
  const changedFields = conflict
    ? [...new Set([...Object.keys(read.item), ...Object.keys(conflict.item)])].filter(
        (key) => key !== '_updatedAt' && !same(read.item[key], conflict.item[key]),
      )
    : [];
  return (
    <section aria-labelledby="item-title">
      {back}
      <h1 id="item-title">Item {id}</h1>
      <p className="hint">Revision (ETag) {read.etag}</p>
      <div className="field">
        <label htmlFor="item-json">Item (JSON)</label>
        <textarea
          id="item-json"
          rows={Math.min(30, text.split('\n').length + 2)}
          spellCheck={false}
          value={text}
          onChange={(event) => {
            setText(event.target.value);
            setSaved(false);
          }}
        />
      </div>
      <div className="toolbar">
        <button
          type="button"
          className="primary"
          disabled={save.busy || conflict !== undefined}
          onClick={() => save.run(read)}
        >
          {save.busy ? 'Saving…' : 'Save'}
        </button>
        <button type="button" onClick={() => reload.run()} disabled={reload.busy}>
          Reload
        </button>
        {saved && (
          <span role="status" className="ok">
            Saved.
          </span>
        )}
      </div>
      <ActionError error={save.error ?? reload.error} />
      {conflict && (
        <div className="conflict" role="alert" aria-labelledby="conflict-title">
          <h2 id="conflict-title">The item changed since you opened it</h2>
          <p>
            Changed fields: {changedFields.length > 0 ? changedFields.join(', ') : 'none visible'}.
            Reload to take the current item and drop your edit, or overwrite it with your edit.
          </p>
          <div className="side-by-side">
            <div>
              <h3>Current item (revision {conflict.etag})</h3>
              <JsonText value={conflict.item} label="Current item" />
            </div>
            <div>
              <h3>Your edit</h3>
              {edited ? (
                <JsonText value={edited} label="Your edit" />
              ) : (
                <pre className="json">{text}</pre>
              )}
            </div>
          </div>
          <div className="toolbar">
            <button type="button" onClick={() => show(conflict)}>
              Reload (discard my edit)
            </button>
            <button
              type="button"
              className="danger"
              disabled={save.busy}
              onClick={() => save.run(conflict)}
            >
              Overwrite
            </button>
          </div>
        </div>
      )}
    </section>
  );
}
