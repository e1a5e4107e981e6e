import { unwrap, useApi } from '../../api';
import type { Schemas } from '@profile-data/client';
import { navigate, Link, segment } from '../../router';
import { Async, useLoad } from '../../ui/async';
import { ListTable } from '../../ui/list-table';
import { ProblemView } from '../../ui/problem';
import { NewItemForm } from './new-item';
import { bytes } from './query';

type Collection = Schemas['DataCollectionDto'];
type Stats = Schemas['DataCollectionStatsDto'];

/** The key's collections in the request branch, with their indexes, counts and sizes. */
export function CollectionsView() {
  const { client, me } = useApi();
  const collections = useLoad(async () => (await unwrap(client.GET('/data'))) ?? [], [client]);
  // The quota as it is now: the key's GET /me at sign-in predates the collections made since.
  const fresh = useLoad(() => unwrap(client.GET('/me')), [client]);
  const quota = (fresh.state === 'ready' ? fresh.data : me).quota.collections;
  return (
    <section aria-labelledby="collections-title">
      <h1 id="collections-title">Collections</h1>
      {quota && (
        <p>
          Collections: {quota.used} of {quota.limit} in this branch.
        </p>
      )}
      <Async loaded={collections}>
        {(list) => (
          <ListTable
            rows={list}
            rowKey={(collection) => collection.name}
            emptyText="No collections yet: add an item below to create one."
            caption={{ text: 'Collections', hidden: true }}
            columns={[
              { header: 'Name' },
              { header: 'Items' },
              { header: 'Size' },
              { header: 'Indexes' },
            ]}
            row={(collection) => <CollectionRow collection={collection} />}
          />
        )}
      </Async>
      <NewItemForm onCreated={(collection) => navigate(`/data/${segment(collection)}`)} />
    </section>
  );
}

function CollectionRow(props: { collection: Collection }) {
  const { client, me } = useApi();
  const { name, indexes } = props.collection;
  // Stats are for root and team keys; a sub key sees names and indexes only.
  const stats = useLoad<Stats | undefined>(
    async () =>
      me.kind === 'sub'
        ? undefined
        : unwrap(
            client.GET('/data/{collection}/stats', { params: { path: { collection: name } } }),
          ),
    [client, name],
  );
  return (
    <tr>
      <th scope="row">
        <Link to={`/data/${segment(name)}`}>{name}</Link>
      </th>
      {stats.state === 'error' ? (
        <td colSpan={2}>
          <ProblemView error={stats.error} />
        </td>
      ) : (
        <>
          <td>{stats.state === 'ready' ? (stats.data?.count ?? '—') : '…'}</td>
          <td>{stats.state === 'ready' && stats.data ? bytes(stats.data.sizeBytes) : '—'}</td>
        </>
      )}
      <td>{indexes.map((index) => index.name).join(', ')}</td>
    </tr>
  );
}
