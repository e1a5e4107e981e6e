import { AccessRulesController } from './access/access.controller';
import { AnalysisController } from './analysis/analysis.controller';
import { CollectionsController } from './collections/collections.controller';
import { IndexesController } from './indexes/indexes.controller';
import { BulkController } from './items/bulk.controller';
import { CountController } from './items/count.controller';
import { ExpiryController } from './rules/expiry/expiry.controller';
import { ItemByValueController } from './items/item-by-value.controller';
import { CollectionItemsController } from './items/collection-items.controller';
import { SearchController } from './search/search.controller';
import { SchemaController } from './rules/schema/schema.controller';
import { TypedClientsController } from './rules/typed/typed-clients.controller';

/**
 * The controllers of `/data`, one per URL. Their paths cannot overlap: after
 * `{collection}` comes nothing, one fixed segment (`count`, `bulk`, `index`, `stats`,
 * `aggregate`, `explain`, `schema`, `schema-violations`, `expiry`, `access`, `search`), or exactly the two
 * parameters of an item — and no URL has both a fixed second segment and a parameter there. So no route can
 * take another's requests, whatever the order (src/routes.spec.ts holds every pair of routes to
 * it); a new route keeps to these shapes instead of relying on its place in this list.
 *
 * One exception: `GET /data/openapi.json`. It has the shape of `GET /data/{collection}`, but no
 * collection name holds a dot, so it names no collection. Its controller comes first, so that it
 * takes that path before the collection route would (src/routes.spec.ts holds both: that such a
 * fixed segment can be no collection name, and that its controller is registered earlier).
 */
export const DATA_CONTROLLERS = [
  TypedClientsController,
  CollectionsController,
  CollectionItemsController,
  BulkController,
  CountController,
  ItemByValueController,
  IndexesController,
  AnalysisController,
  SchemaController,
  ExpiryController,
  AccessRulesController,
  SearchController,
];
