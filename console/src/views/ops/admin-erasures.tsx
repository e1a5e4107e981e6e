import type { Schemas } from '@profile-data/client';
import { unwrap, useApi } from '../../api';
import { Link, segment } from '../../router';
import { Async, useLoad } from '../../ui/async';
import { ListTable } from '../../ui/list-table';
import { usePolling } from './polling';
import { Pager, pageOf, usePager, when } from './shared';

type Erasure = Schemas['ErasureDto'];

const STEPS: Erasure['stepsDone'] = [
  'keys',
  'memberships',
  'projects',
  'collections',
  'files',
  'owner',
];

const PAGE = 25;

/** Every erasure, newest first. A finished one names nobody: its target is gone. */
export function ErasuresView() {
  const { client } = useApi();
  const pager = usePager();
  const erasures = useLoad(
    (signal) => {
      const query = { limit: PAGE, ...(pager.after ? { after: pager.after } : {}) };
      return pageOf(client.GET('/admin/erasures', { params: { query }, signal }));
    },
    [client, pager.after],
  );
  return (
    <section aria-labelledby="erasures-title">
      <h1 id="erasures-title">Erasures</h1>
      <div className="toolbar">
        <button type="button" onClick={erasures.reload}>
          Refresh
        </button>
      </div>
      <Async loaded={erasures}>
        {(page) => (
          <ListTable
            rows={page.list}
            rowKey={(erasure) => erasure.id}
            emptyText="No erasures yet."
            className="ops-table"
            columns={[
              {
                header: 'Erasure',
                className: 'mono',
                cell: (erasure) => (
                  <Link to={`/admin/erasures/${segment(erasure.id)}`}>{erasure.id}</Link>
                ),
              },
              { header: 'Of a', cell: (erasure) => erasure.kind },
              { header: 'Status', cell: (erasure) => erasureStatus(erasure) },
              {
                header: 'Steps done',
                cell: (erasure) => `${erasure.stepsDone.length} of ${STEPS.length}`,
              },
              { header: 'Requested', cell: (erasure) => when(erasure.requestedAt) },
              { header: 'Finished', cell: (erasure) => when(erasure.finishedAt) },
            ]}
            footer={<Pager pager={pager} next={page.next} label="Erasures" />}
          />
        )}
      </Async>
    </section>
  );
}

/** One erasure and its steps, refreshed every second until it has ended. */
export function ErasureView(props: { id: string }) {
  const { client } = useApi();
  const erasure = usePolling(
    (signal) =>
      unwrap(client.GET('/admin/erasures/{id}', { params: { path: { id: props.id } }, signal })),
    (data) => data.status !== 'running',
    1000,
    [client, props.id],
  );
  return (
    <section aria-labelledby="erasure-title">
      <p>
        <Link to="/admin/erasures">← Erasures</Link>
      </p>
      <h1 id="erasure-title">
        Erasure <span className="mono">{props.id}</span>
      </h1>
      <Async loaded={erasure}>{(data) => <ErasureFacts erasure={data} />}</Async>
    </section>
  );
}

export function erasureStatus(erasure: Erasure): string {
  return erasure.status === 'done' ? 'finished' : 'running';
}

function ErasureFacts(props: { erasure: Erasure }) {
  const { erasure } = props;
  return (
    <>
      <p role="status" aria-live="polite" className={erasure.status === 'done' ? 'ok' : ''}>
        Status: <strong>{erasureStatus(erasure)}</strong>
        {erasure.status === 'running' ? ' (refreshing every second)' : ''}
      </p>
      <dl className="facts">
        <div>
          <dt>Of a</dt>
          <dd>{erasure.kind}</dd>
        </div>
        <div>
          <dt>Requested</dt>
          <dd>{when(erasure.requestedAt)}</dd>
        </div>
        <div>
          <dt>Finished</dt>
          <dd>{when(erasure.finishedAt)}</dd>
        </div>
        <div>
          <dt>Collections dropped</dt>
          <dd>{erasure.collectionsDropped}</dd>
        </div>
        <div>
          <dt>Runs</dt>
          <dd>{erasure.runs}</dd>
        </div>
      </dl>
      <h2>Steps</h2>
      <ol className="steps">
        {STEPS.map((step) => {
          const done = erasure.stepsDone.includes(step);
          return (
            <li key={step} className={done ? 'ok' : ''}>
              {step}: {done ? 'done' : 'to do'}
            </li>
          );
        })}
      </ol>
    </>
  );
}
