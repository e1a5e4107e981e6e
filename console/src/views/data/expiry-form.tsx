import { useEffect, useState, type FormEvent } from 'react';
import { unwrap, useApi } from '../../api';
import type { Schemas } from '@profile-data/client';
import { ActionError, SaveOrRemove, useAction } from '../../ui/action';
import { Async, useLoad } from '../../ui/async';
import { noneWhen } from './schema-tab';

type Expiry = Schemas['ExpiryDto'];

/** The collection's expiry rule: items go `afterSeconds` after the time in `field`. */
export function ExpiryForm(props: { collection: string }) {
  const { client } = useApi();
  const path = { collection: props.collection };
  const expiry = useLoad(
    () =>
      noneWhen(
        'EXPIRY_NOT_FOUND',
        unwrap(client.GET('/data/{collection}/expiry', { params: { path } })),
      ),
    [client, props.collection],
  );
  return (
    <section aria-labelledby="expiry-title">
      <h2 id="expiry-title">Expiry</h2>
      <Async loaded={expiry}>
        {(current) => <ExpiryEditor path={path} current={current} onSaved={expiry.reload} />}
      </Async>
    </section>
  );
}

function ExpiryEditor(props: {
  path: { collection: string };
  current?: Expiry;
  onSaved: () => void;
}) {
  const { client } = useApi();
  const { path, current } = props;
  const [field, setField] = useState('');
  const [seconds, setSeconds] = useState('');
  useEffect(() => {
    setField(current?.field ?? '_createdAt');
    setSeconds(current ? String(current.afterSeconds) : '86400');
  }, [current]);
  const save = useAction(async () => {
    await unwrap(
      client.PUT('/data/{collection}/expiry', {
        params: { path },
        body: { field: field.trim(), afterSeconds: Number(seconds) },
      }),
    );
    props.onSaved();
  });
  const remove = useAction(async () => {
    await unwrap(client.DELETE('/data/{collection}/expiry', { params: { path } }));
    props.onSaved();
  });
  const submit = (event: FormEvent) => {
    event.preventDefault();
    save.run();
  };
  return (
    <form className="data-form" onSubmit={submit} aria-label="Expiry">
      <p>
        {current
          ? `Items expire ${current.afterSeconds} s after their ${current.field} (set ${current.changedAt}).`
          : 'No expiry rule: items stay until deleted.'}
      </p>
      <div className="toolbar">
        <label htmlFor="expiry-field">Time field</label>
        <input
          id="expiry-field"
          value={field}
          required
          onChange={(event) => setField(event.target.value)}
        />
        <label htmlFor="expiry-seconds">Expires after (seconds)</label>
        <input
          id="expiry-seconds"
          type="number"
          min={1}
          required
          value={seconds}
          onChange={(event) => setSeconds(event.target.value)}
        />
        <SaveOrRemove what="expiry" save={save} remove={remove} removable={Boolean(current)} />
      </div>
      <ActionError error={save.error ?? remove.error} />
    </form>
  );
}
