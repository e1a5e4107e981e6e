import { useState } from 'react';
import { unwrap, useApi } from '../../api';
import { Link, segment } from '../../router';
import { ActionError, useAction } from '../../ui/action';
import { Async } from '../../ui/async';
import { Confirm } from '../../ui/confirm';
import { cellText } from '../../ui/json';
import { BulkDelete } from './bulk-delete';
import { NewItemForm } from './new-item';
import type { ItemQuery } from './query';
import { QueryForm } from './query-form';
import { usePage, type Item } from './use-page';

/** The items of a collection: the query form, one page of items, paging, create and delete. */
export function ItemsTab(props: {
  collection: string;
  query: ItemQuery;
  onQuery: (query: ItemQuery) => void;
}) {
  const { collection, query } = props;
  const { page, go } = usePage(collection, query);
  return (
    <>
      <QueryForm query={query} onApply={props.onQuery} />
      <BulkDelete collection={collection} query={query} onDeleted={page.reload} />
      <Async loaded={page} empty={(data) => data.items.length === 0} emptyText="No items.">
        {(data) => (
          <ItemsTable collection={collection} items={data.items} onDeleted={page.reload} />
        )}
      </Async>
      <nav className="toolbar" aria-label="Pages">
        <button
          type="button"
          disabled={page.state !== 'ready' || page.data.prev === undefined}
          onClick={() => page.state === 'ready' && go(page.data.prev)}
        >
          Previous page
        </button>
        <button
          type="button"
          disabled={page.state !== 'ready' || page.data.next === undefined}
          onClick={() => page.state === 'ready' && go(page.data.next)}
        >
          Next page
        </button>
        {page.state === 'ready' && (
          <span className="hint" role="status">
            {page.data.items.length} items on this page
          </span>
        )}
      </nav>
      <NewItemForm collection={collection} onCreated={page.reload} />
    </>
  );
}

/** The columns of a page: `_id` first, then every field in the order the items hold them. */
function columnsOf(items: readonly Item[]): string[] {
  const columns = new Set<string>(['_id']);
  for (const item of items) for (const key of Object.keys(item)) columns.add(key);
  return [...columns];
}

function ItemsTable(props: { collection: string; items: Item[]; onDeleted: () => void }) {
  const { client } = useApi();
  const { collection, items } = props;
  const columns = columnsOf(items);
  const [deleting, setDeleting] = useState<string | undefined>(undefined);
  const remove = useAction(async (id: string) => {
    setDeleting(undefined);
    await unwrap(
      client.DELETE('/data/{collection}/{indexName}/{indexValue}', {
        params: { path: { collection, indexName: '_id', indexValue: id } },
      }),
    );
    props.onDeleted();
  });
  return (
    <>
      <ActionError error={remove.error} />
      <div className="table-wrap" tabIndex={0} role="region" aria-label="Items">
        <table className="items wide">
          <thead>
            <tr>
              {columns.map((column) => (
                <th scope="col" key={column}>
                  {column}
                </th>
              ))}
              <th scope="col">
                <span className="visually-hidden">Actions</span>
              </th>
            </tr>
          </thead>
          <tbody>
            {items.map((item) => (
              <tr key={item._id}>
                {columns.map((column) =>
                  column === '_id' ? (
                    <th scope="row" key={column}>
                      <Link to={`/data/${segment(collection)}/items/${segment(item._id)}`}>
                        {item._id}
                      </Link>
                    </th>
                  ) : (
                    <td key={column}>{cellText(item[column])}</td>
                  ),
                )}
                <td>
                  <button
                    type="button"
                    className="danger"
                    aria-label={`Delete item ${item._id}`}
                    disabled={remove.busy}
                    onClick={() => setDeleting(item._id)}
                  >
                    Delete
                  </button>
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      </div>
      <Confirm
        open={deleting !== undefined}
        title="Delete this item?"
        confirmLabel="Delete item"
        onCancel={() => setDeleting(undefined)}
        onConfirm={() => deleting !== undefined && remove.run(deleting)}
      >
        <p>
          The item <code>{deleting}</code> is deleted from {collection}. This cannot be undone.
        </p>
      </Confirm>
    </>
  );
}
