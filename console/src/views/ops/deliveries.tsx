import type { Schemas } from '@profile-data/client';
import { unwrap, useApi } from '../../api';
import { Link } from '../../router';
import { Async, useLoad } from '../../ui/async';
import { ListTable } from '../../ui/list-table';
import { when } from './shared';

type Delivery = Schemas['DeliveryDto'];

/** A webhook's newest deliveries, each with its attempts. */
export function DeliveriesView(props: { id: string }) {
  const { client } = useApi();
  const deliveries = useLoad(
    async (signal) =>
      (await unwrap(
        client.GET('/webhooks/{id}/deliveries', { params: { path: { id: props.id } }, signal }),
      )) ?? [],
    [client, props.id],
  );
  return (
    <section aria-labelledby="deliveries-title">
      <p>
        <Link to="/webhooks">← Webhooks</Link>
      </p>
      <h1 id="deliveries-title">Deliveries</h1>
      <p className="hint">
        Webhook <span className="mono">{props.id}</span>: the newest deliveries, with every attempt.
      </p>
      <div className="toolbar">
        <button type="button" onClick={deliveries.reload}>
          Refresh
        </button>
      </div>
      <Async loaded={deliveries}>
        {(list) => (
          <ListTable
            rows={list}
            rowKey={(delivery) => delivery.id}
            emptyText="No deliveries yet: events of this webhook's types have not happened since it was registered."
            className="ops-table"
            columns={[
              { header: 'Event', className: 'mono', cell: (delivery) => delivery.eventId },
              { header: 'Status', cell: (delivery) => delivery.status },
              { header: 'Attempts', cell: (delivery) => <Attempts delivery={delivery} /> },
              {
                header: 'Next attempt',
                cell: (delivery) =>
                  delivery.status === 'pending' ? when(delivery.nextAttemptAt) : '—',
              },
              { header: 'Created', cell: (delivery) => when(delivery.createdAt) },
            ]}
          />
        )}
      </Async>
    </section>
  );
}

function Attempts(props: { delivery: Delivery }) {
  const { attempts } = props.delivery;
  if (attempts.length === 0) return <>none yet</>;
  return (
    <ol className="attempts">
      {attempts.map((attempt, index) => (
        <li key={index}>
          {when(attempt.at)}: {attempt.status ?? 'no answer'}, {attempt.durationMs} ms
          {attempt.error ? ` (${attempt.error})` : ''}
        </li>
      ))}
    </ol>
  );
}
