import { unwrap, useApi } from '../../api';
import { Link, segment } from '../../router';
import { ActionError, useConfirmedAction } from '../../ui/action';
import { Async } from '../../ui/async';
import { Confirm } from '../../ui/confirm';
import { ListTable, type Column } from '../../ui/list-table';
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
  const remove = useConfirmedAction(
    async (id: string) => {
      await unwrap(
        client.DELETE('/data/{collection}/{indexName}/{indexValue}', {
          params: { path: { collection, indexName: '_id', indexValue: id } },
        }),
      );
      props.onDeleted();
    },
    { close: 'at-once' },
  );
  const columns: Column<Item>[] = columnsOf(items).map((column) =>
    column === '_id'
      ? {
          header: column,
          rowHeader: true,
          cell: (item) => (
            <Link to={`/data/${segment(collection)}/items/${segment(item._id)}`}>{item._id}</Link>
          ),
        }
      : { header: column, cell: (item) => cellText(item[column]) },
  );
  return (
    <>
      <ActionError error={remove.error} />
      <ListTable
        rows={items}
        rowKey={(item) => item._id}
        className="items wide"
        region="Items"
        columns={[
          ...columns,
          {
            header: <span className="visually-hidden">Actions</span>,
            cell: (item) => (
              <button
                type="button"
                className="danger"
                aria-label={`Delete item ${item._id}`}
                disabled={remove.busy}
                onClick={() => remove.ask(item._id)}
              >
                Delete
              </button>
            ),
          },
        ]}
      />
      <Confirm {...remove.dialog} title="Delete this item?" confirmLabel="Delete item">
        <p>
          The item <code>{remove.target}</code> is deleted from {collection}. This cannot be undone.
        </p>
      </Confirm>
    </>
  );
}
