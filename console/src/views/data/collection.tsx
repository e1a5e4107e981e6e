import { useState } from 'react';
import { useApi } from '../../api';
import { Link, segment } from '../../router';
import { IndexesTab } from './indexes-tab';
import { ItemsTab } from './items-tab';
import { LiveTab } from './live-tab';
import { storedQuery, storeQuery, type ItemQuery } from './query';
import { SchemaTab } from './schema-tab';

export type Tab = 'items' | 'indexes' | 'live' | 'schema';

const TABS: { tab: Tab; label: string; path: string; rootOnly: boolean }[] = [
  { tab: 'items', label: 'Items', path: '', rootOnly: false },
  { tab: 'indexes', label: 'Indexes', path: '/indexes', rootOnly: true },
  { tab: 'live', label: 'Live', path: '/live', rootOnly: false },
  { tab: 'schema', label: 'Schema & expiry', path: '/schema', rootOnly: true },
];

/** One collection: its items, indexes, live changes, schema and expiry, as tabs (routes). */
export function CollectionView(props: { collection: string; tab: Tab }) {
  const { me } = useApi();
  const { collection, tab } = props;
  const [query, setQueryState] = useState<ItemQuery>(() => storedQuery(collection));
  const setQuery = (next: ItemQuery) => {
    storeQuery(collection, next);
    setQueryState(next);
  };
  const tabs = TABS.filter((each) => !each.rootOnly || me.kind !== 'sub');
  const label = TABS.find((each) => each.tab === tab)?.label ?? '';
  return (
    <section aria-labelledby="collection-title">
      <p className="crumbs">
        <Link to="/data">Collections</Link> /
      </p>
      <h1 id="collection-title">
        <span className="visually-hidden">Collection </span>
        {collection}
        <span className="visually-hidden"> — {label}</span>
      </h1>
      <nav aria-label="Collection" className="tabs">
        {tabs.map((each) => (
          <a
            key={each.tab}
            href={`#/data/${segment(collection)}${each.path}`}
            aria-current={each.tab === tab ? 'page' : undefined}
          >
            {each.label}
          </a>
        ))}
      </nav>
      {tab === 'items' && <ItemsTab collection={collection} query={query} onQuery={setQuery} />}
      {tab === 'indexes' && <IndexesTab collection={collection} query={query} />}
      {tab === 'live' && <LiveTab collection={collection} query={query} />}
      {tab === 'schema' && <SchemaTab collection={collection} />}
    </section>
  );
}
