import { useState } from 'react';
import { unwrap, useApi } from '../../api';
import type { Schemas } from '@profile-data/client';
import { ActionError, useAction } from '../../ui/action';
import { ListTable } from '../../ui/list-table';

type Page = Schemas['SchemaViolationsDto'];

/**
 * The stored items that break the schema (GET /data/{c}/schema-violations): 100 items are read
 * per check, in `_id` order; "Check further" goes on from where the last check stopped.
 */
export function Violations(props: { collection: string }) {
  const { client } = useApi();
  const [page, setPage] = useState<Page | undefined>(undefined);
  const check = useAction(async (after?: string) => {
    const found = await unwrap(
      client.GET('/data/{collection}/schema-violations', {
        params: {
          path: { collection: props.collection },
          query: { limit: '100', ...(after !== undefined ? { after } : {}) },
        },
      }),
    );
    setPage(found);
  });
  return (
    <section aria-labelledby="violations-title">
      <h2 id="violations-title">Schema violations</h2>
      <div className="toolbar">
        <button type="button" disabled={check.busy} onClick={() => check.run()}>
          Check items
        </button>
        {page?.next !== undefined && (
          <button type="button" disabled={check.busy} onClick={() => check.run(page.next)}>
            Check further
          </button>
        )}
      </div>
      <ActionError error={check.error} />
      {page && (
        <>
          <p role="status">
            {page.checked} items checked, {page.violating} break the schema.
          </p>
          <ListTable
            rows={page.sample.flatMap((sample) =>
              sample.errors.map((error, at) => ({ id: sample._id, at, error })),
            )}
            rowKey={(row) => `${row.id}\u0000${row.at}`}
            className="wide"
            region="Violations"
            columns={[
              { header: 'Item', rowHeader: true, cell: (row) => row.id },
              { header: 'Where', cell: (row) => row.error.pointer || '(the item)' },
              { header: 'Rule', cell: (row) => row.error.keyword },
              { header: 'Message', cell: (row) => row.error.message },
            ]}
          />
        </>
      )}
    </section>
  );
}
