import type { Schemas } from '@profile-data/client';
import { unwrap, useApi } from '../../api';
import { Link, segment } from '../../router';
import { Async, useLoad } from '../../ui/async';
import { ListTable } from '../../ui/list-table';
import { usePolling } from './polling';
import { Pager, pageOf, usePager, when } from './shared';

type Move = Schemas['MoveDto'];

const PAGE = 25;

function progress(move: Move): string {
  return `${move.collectionsCopied} of ${move.collections} collections, ${move.itemsCopied} items, ${move.filesCopied} files`;
}

/** Every tenant move, newest first. */
export function AdminMovesView() {
  const { client } = useApi();
  const pager = usePager();
  const moves = useLoad(
    (signal) => {
      const query = { limit: PAGE, ...(pager.after ? { after: pager.after } : {}) };
      return pageOf(client.GET('/admin/moves', { params: { query }, signal }));
    },
    [client, pager.after],
  );
  return (
    <section aria-labelledby="moves-title">
      <h1 id="moves-title">Tenant moves</h1>
      <div className="toolbar">
        <button type="button" onClick={moves.reload}>
          Refresh
        </button>
      </div>
      <Async loaded={moves}>
        {(page) => (
          <ListTable
            rows={page.list}
            rowKey={(move) => move.id}
            emptyText="No moves yet."
            className="ops-table"
            columns={[
              {
                header: 'Move',
                className: 'mono',
                cell: (move) => <Link to={`/admin/moves/${segment(move.id)}`}>{move.id}</Link>,
              },
              {
                header: 'Tenant',
                cell: (move) => (
                  <>
                    {move.kind} <span className="mono">{move.database}</span>
                  </>
                ),
              },
              {
                header: 'From → to',
                cell: (move) => `${move.from ?? 'main database'} → ${move.cluster}`,
              },
              { header: 'Status', cell: (move) => move.status },
              { header: 'Progress', cell: (move) => progress(move) },
              { header: 'Started', cell: (move) => when(move.startedAt) },
            ]}
            footer={<Pager pager={pager} next={page.next} label="Moves" />}
          />
        )}
      </Async>
    </section>
  );
}

/** One move, refreshed every second while it runs. */
export function AdminMoveView(props: { id: string }) {
  const { client } = useApi();
  const move = usePolling(
    (signal) =>
      unwrap(client.GET('/admin/moves/{id}', { params: { path: { id: props.id } }, signal })),
    (data) => data.status !== 'running',
    1000,
    [client, props.id],
  );
  return (
    <section aria-labelledby="move-title">
      <p>
        <Link to="/admin/moves">← Tenant moves</Link>
      </p>
      <h1 id="move-title">
        Move <span className="mono">{props.id}</span>
      </h1>
      <Async loaded={move}>
        {(data) => (
          <>
            <p role="status" aria-live="polite">
              Status: <strong>{data.status}</strong>
              {data.status === 'running' ? ' (refreshing every second)' : ''}
            </p>
            {data.error !== null && <p className="problem">{data.error}</p>}
            <label htmlFor="move-progress">Collections copied</label>{' '}
            <progress
              id="move-progress"
              max={Math.max(data.collections, 1)}
              value={data.collectionsCopied}
            >
              {data.collectionsCopied} of {data.collections}
            </progress>
            <dl className="facts">
              <div>
                <dt>Tenant</dt>
                <dd>
                  {data.kind} <span className="mono">{data.database}</span>
                </dd>
              </div>
              <div>
                <dt>From → to</dt>
                <dd>
                  {data.from ?? 'main database'} → {data.cluster}
                </dd>
              </div>
              <div>
                <dt>Progress</dt>
                <dd>{progress(data)}</dd>
              </div>
              <div>
                <dt>Phase</dt>
                <dd>
                  {data.phase}
                  {data.status === 'running' && data.pass > 0
                    ? `, pass ${data.pass}, ${data.itemsLeft} items left in it`
                    : ''}
                </dd>
              </div>
              <div>
                <dt>Last progress</dt>
                <dd>{when(data.progressAt)}</dd>
              </div>
              <div>
                <dt>Deadline</dt>
                <dd>{when(data.deadlineAt)}</dd>
              </div>
              <div>
                <dt>Started</dt>
                <dd>{when(data.startedAt)}</dd>
              </div>
              <div>
                <dt>Finished</dt>
                <dd>{when(data.finishedAt)}</dd>
              </div>
              <div>
                <dt>Runs</dt>
                <dd>{data.runs}</dd>
              </div>
            </dl>
          </>
        )}
      </Async>
    </section>
  );
}
