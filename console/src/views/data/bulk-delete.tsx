import { useState } from 'react';
import { unwrap, useApi } from '../../api';
import type { Schemas } from '@profile-data/client';
import { ActionError, useAction, useConfirmedAction } from '../../ui/action';
import { Confirm } from '../../ui/confirm';
import { bodyFilter, filterParams, type ItemQuery } from './query';

type BodyFilter = Schemas['DeleteDataItemsDto']['filter'];

/**
 * Deletes every item the query's filter selects (DELETE /data/{c} with `multi: true`), after a
 * confirmation that says how many that is (GET /data/{c}/count with the same filter).
 */
export function BulkDelete(props: { collection: string; query: ItemQuery; onDeleted: () => void }) {
  const { client } = useApi();
  const { collection, query } = props;
  const [deleted, setDeleted] = useState<number | undefined>(undefined);
  const filtered = query.conditions.some((each) => each.field.trim() !== '');
  // The target is the count the dialog shows; the delete takes the filter as it is now.
  const remove = useConfirmedAction<number>(
    async () => {
      const filter = bodyFilter(query.conditions) as BodyFilter;
      const result = await unwrap(
        client.DELETE('/data/{collection}', {
          params: { path: { collection } },
          body: { filter, multi: true },
        }),
      );
      setDeleted(result && 'deleted' in result ? result.deleted : 0);
      props.onDeleted();
    },
    { close: 'at-once' },
  );
  const ask = useAction(async () => {
    setDeleted(undefined);
    const counted = await unwrap(
      client.GET('/data/{collection}/count', {
        params: { path: { collection }, query: filterParams(query) },
      }),
    );
    remove.ask(counted.count);
  });
  return (
    <div className="toolbar">
      <button
        type="button"
        className="danger"
        disabled={!filtered || ask.busy || remove.busy}
        onClick={() => ask.run()}
      >
        Delete matching items…
      </button>
      {!filtered && <span className="hint">Add a filter condition to delete by filter.</span>}
      {deleted !== undefined && <span role="status">Deleted {deleted} items.</span>}
      <ActionError error={ask.error ?? remove.error} />
      <Confirm
        {...remove.dialog}
        title="Delete the matching items?"
        confirmLabel={`Delete ${remove.target ?? 0} items`}
      >
        <p>
          {remove.target} items of {collection} match the filter. They are deleted; this cannot be
          undone.
        </p>
      </Confirm>
    </div>
  );
}
