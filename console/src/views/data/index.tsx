import type { ConsoleView } from '../registry';
import { TENANT_KINDS } from '../registry';
import { CollectionView } from './collection';
import { CollectionsView } from './collections';
import { ItemEditor } from './item-editor';
import './data.css';

/** Collections, items, indexes, the live panel, schema and expiry. */
export const dataViews: ConsoleView[] = [
  {
    pattern: '/data',
    render: () => <CollectionsView />,
    nav: { label: 'Collections', kinds: TENANT_KINDS },
  },
  {
    pattern: '/data/:collection',
    render: (params) => <CollectionView collection={params.collection ?? ''} tab="items" />,
  },
  {
    pattern: '/data/:collection/indexes',
    render: (params) => <CollectionView collection={params.collection ?? ''} tab="indexes" />,
  },
  {
    pattern: '/data/:collection/live',
    render: (params) => <CollectionView collection={params.collection ?? ''} tab="live" />,
  },
  {
    pattern: '/data/:collection/schema',
    render: (params) => <CollectionView collection={params.collection ?? ''} tab="schema" />,
  },
  {
    pattern: '/data/:collection/items/:id',
    render: (params) => <ItemEditor collection={params.collection ?? ''} id={params.id ?? ''} />,
  },
];
