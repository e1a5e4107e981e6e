import { useEffect, useState, type FormEvent } from 'react';
import { ApiProblemError, unwrap, useApi } from '../../api';
import type { Schemas } from '@profile-data/client';
import { ActionError, SaveOrRemove, useAction } from '../../ui/action';
import { Async, useLoad } from '../../ui/async';
import { ExpiryForm } from './expiry-form';
import { parseObject } from './new-item';
import { Violations } from './violations';

type Schema = Schemas['CollectionSchemaDto'];

/** A 404 with this code means "none": the rule is simply not set. */
export function noneWhen<T>(code: string, call: Promise<T>): Promise<T | undefined> {
  return call.catch((error: unknown) => {
    if (error instanceof ApiProblemError && error.status === 404 && error.problem?.code === code)
      return undefined;
    throw error;
  });
}

/** The collection's JSON Schema, its expiry rule and the items that break the schema. */
export function SchemaTab(props: { collection: string }) {
  const { client } = useApi();
  const { collection } = props;
  const path = { collection };
  const schema = useLoad(
    () =>
      noneWhen(
        'SCHEMA_NOT_FOUND',
        unwrap(client.GET('/data/{collection}/schema', { params: { path } })),
      ),
    [client, collection],
  );
  return (
    <>
      <section aria-labelledby="schema-title">
        <h2 id="schema-title">Schema</h2>
        <Async loaded={schema}>
          {(current) => (
            <SchemaForm collection={collection} current={current} onSaved={schema.reload} />
          )}
        </Async>
      </section>
      <ExpiryForm collection={collection} />
      <Violations collection={collection} />
    </>
  );
}

function SchemaForm(props: { collection: string; current?: Schema; onSaved: () => void }) {
  const { client } = useApi();
  const { current } = props;
  const path = { collection: props.collection };
  const [text, setText] = useState('');
  const [action, setAction] = useState<'error' | 'warn'>('error');
  useEffect(() => {
    setText(JSON.stringify(current?.schema ?? { type: 'object', properties: {} }, null, 2));
    setAction(current?.action ?? 'error');
  }, [current]);
  const save = useAction(async () => {
    const schema = parseObject(text);
    await unwrap(
      client.PUT('/data/{collection}/schema', { params: { path }, body: { schema, action } }),
    );
    props.onSaved();
  });
  const remove = useAction(async () => {
    await unwrap(client.DELETE('/data/{collection}/schema', { params: { path } }));
    props.onSaved();
  });
  const submit = (event: FormEvent) => {
    event.preventDefault();
    save.run();
  };
  return (
    <form className="data-form" onSubmit={submit} aria-label="Schema">
      <p>
        {current
          ? `Writes are checked against this schema (last changed ${current.changedAt}).`
          : 'No schema: writes are not checked.'}
      </p>
      <div className="field">
        <label htmlFor="schema-json">JSON Schema (draft 2020-12)</label>
        <textarea
          id="schema-json"
          rows={Math.min(24, text.split('\n').length + 2)}
          spellCheck={false}
          value={text}
          onChange={(event) => setText(event.target.value)}
        />
      </div>
      <div className="toolbar">
        <label htmlFor="schema-action">On a violation</label>
        <select
          id="schema-action"
          value={action}
          onChange={(event) => setAction(event.target.value === 'warn' ? 'warn' : 'error')}
        >
          <option value="error">refuse the write (error)</option>
          <option value="warn">write it and warn</option>
        </select>
        <SaveOrRemove what="schema" save={save} remove={remove} removable={Boolean(current)} />
      </div>
      <ActionError error={save.error ?? remove.error} />
    </form>
  );
}
