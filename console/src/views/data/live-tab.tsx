import { useEffect, useState } from 'react';
import { useApi } from '../../api';
import { parseChangeEvent, streamEvents, type ChangeEvent } from '@profile-data/client';
import { ProblemView } from '../../ui/problem';
import { cellText } from '../../ui/json';
import { ListTable } from '../../ui/list-table';
import { queryFilter, type ItemQuery } from './query';

type Status = { state: 'connecting' } | { state: 'live' } | { state: 'retrying'; seconds: number };

const KEEP = 200;

/**
 * The collection's changes as they happen (GET /events/stream), as a live query of the items
 * filter when there is one: the service then sends `entered` and `left` as items start or stop
 * matching. After a dropped connection it resumes with Last-Event-ID, missing nothing.
 */
export function LiveTab(props: { collection: string; query: ItemQuery }) {
  const { options } = useApi();
  const { collection, query } = props;
  const [events, setEvents] = useState<ChangeEvent[]>([]);
  const [status, setStatus] = useState<Status>({ state: 'connecting' });
  const [error, setError] = useState<unknown>(undefined);
  const filter = queryFilter(query.conditions);
  const filtered = Object.keys(filter).length > 0;
  const fields = query.fields.trim();
  const key = JSON.stringify([filter, fields]);

  useEffect(() => {
    const controller = new AbortController();
    setEvents([]);
    setError(undefined);
    setStatus({ state: 'connecting' });
    streamEvents(
      {
        ...options,
        signal: controller.signal,
        onOpen: () => setStatus({ state: 'live' }),
        onRetry: (_reason, delayMs) =>
          setStatus({ state: 'retrying', seconds: Math.ceil(delayMs / 1000) }),
      },
      {
        collection,
        ...(filtered ? { filter } : {}),
        ...(fields !== '' ? { fields } : {}),
      },
      (message) => {
        const event = parseChangeEvent(message);
        if (event) setEvents((shown) => [event, ...shown].slice(0, KEEP));
      },
    ).catch((failure: unknown) => {
      if (!controller.signal.aborted) setError(failure);
    });
    return () => controller.abort();
  }, [options, collection, key]);

  return (
    <section aria-labelledby="live-title">
      <h2 id="live-title">Live changes</h2>
      <p className="hint">
        {filtered
          ? 'Items of the Items tab’s filter: created, updated, entered, left and deleted.'
          : 'Every change of the collection’s items.'}{' '}
        The newest change is first; the last {KEEP} are kept.
      </p>
      {error !== undefined ? (
        <ProblemView error={error} />
      ) : (
        <p role="status" className={status.state === 'live' ? 'ok' : 'hint'}>
          {status.state === 'live'
            ? 'Live: waiting for changes.'
            : status.state === 'connecting'
              ? 'Connecting…'
              : `Disconnected; reconnecting in ${status.seconds} s.`}
        </p>
      )}
      <ListTable
        rows={events}
        rowKey={(event) => event.id}
        className="wide"
        region="Changes"
        columns={[
          { header: 'Event', cell: (event) => event.id },
          {
            header: 'Change',
            cell: (event) =>
              event.resource === 'collection' ? `collection ${event.type}` : event.type,
          },
          { header: 'Item', rowHeader: true, cell: (event) => event.key },
          { header: 'At', cell: (event) => event.at },
          { header: 'Data', cell: (event) => cellText(event.data) },
        ]}
      />
    </section>
  );
}
