import type { Schemas } from '../../../../client/src';
import { unwrap, useApi } from '../../api';
import { Link } from '../../router';
import { Async } from '../../ui/async';
import { usePolling } from './polling';
import { when } from './shared';

type Erasure = Schemas['ErasureDto'];

const STEPS: Erasure['stepsDone'] = [
  'keys',
  'memberships',
  'projects',
  'collections',
  'files',
  'owner',
];

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
