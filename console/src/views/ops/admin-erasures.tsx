import type { Schemas } from '../../../../client/src';
import { unwrap, useApi } from '../../api';
import { Link, segment } from '../../router';
import { Async, useLoad } from '../../ui/async';
import { usePolling } from './polling';
import { Pager, nextCursor, usePager, when } from './shared';

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
    async (signal) => {
      const query = { limit: PAGE, ...(pager.after ? { after: { id: pager.after } } : {}) };
      const result = await client.GET('/admin/erasures', { params: { query }, signal });
      const list = (await unwrap(Promise.resolve(result))) ?? [];
      return { list, next: nextCursor(result.response, 'after[id]') };
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
      <Async
        loaded={erasures}
        empty={(page) => page.list.length === 0}
        emptyText="No erasures yet."
      >
        {(page) => (
          <>
            <div className="table-wrap">
              <table className="ops-table">
                <thead>
                  <tr>
                    <th scope="col">Erasure</th>
                    <th scope="col">Of a</th>
                    <th scope="col">Status</th>
                    <th scope="col">Steps done</th>
                    <th scope="col">Requested</th>
                    <th scope="col">Finished</th>
                  </tr>
                </thead>
                <tbody>
                  {page.list.map((erasure) => (
                    <tr key={erasure.id}>
                      <td className="mono">
                        <Link to={`/admin/erasures/${segment(erasure.id)}`}>{erasure.id}</Link>
                      </td>
                      <td>{erasure.kind}</td>
                      <td>{erasureStatus(erasure)}</td>
                      <td>
                        {erasure.stepsDone.length} of {STEPS.length}
                      </td>
                      <td>{when(erasure.requestedAt)}</td>
                      <td>{when(erasure.finishedAt)}</td>
                    </tr>
                  ))}
                </tbody>
              </table>
            </div>
            <Pager pager={pager} next={page.next} label="Erasures" />
          </>
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
