import { applyDecorators } from '@nestjs/common';
import { ApiQuery } from '@nestjs/swagger';
import {
  ITEM_FIELDS_SCHEMA,
  ITEM_FILTER_SCHEMA,
  sharedSchemaRef,
} from '../../common/http/openapi-schemas';

/** Whether a feed query parameter belongs to a live query (`filter[…]`, `fields`). */
export function isLiveParam(key: string): boolean {
  return key === 'fields' || key.startsWith('filter[');
}

/** The live query parameters of GET /events and GET /events/stream (docs/events.md). */
export const LiveQueryParams = () =>
  applyDecorators(
    ApiQuery({
      name: 'filter',
      required: false,
      style: 'deepObject',
      explode: true,
      // The list's own schema (src/data/data.openapi.ts), by name.
      schema: sharedSchemaRef(ITEM_FILTER_SCHEMA),
      description:
        'A live query (needs `collection`): the item filter of `GET /data/{collection}`, in its ' +
        '`filter[k]=v` and `filter[k][op]=v` forms only (operators eq, ne, gt, gte, lt, lte, in, ' +
        'nin, exists, prefix; same values and limits, FILTER_MAX_CONDITIONS and ' +
        'FILTER_MAX_IN_VALUES). Item events are then judged by the item before and after each ' +
        'change: `created`, `updated` (matched before and after), `entered` (matches now only), ' +
        '`left` (matched before only; carries the item as it is now, none when the key may not ' +
        "read it any more), `deleted`; changes that match neither are not sent. A sub key's " +
        "items count while its collection's read rule reads them; a filter naming a protected " +
        "field → 400 PROTECTED_FIELD. The collection's own " +
        'events pass. A page (`GET /events`) reads at most `limit` events and answers those of ' +
        'the query: it may hold fewer, even none, while `next` moves on. See docs/events.md.',
      example: { status: 'open', total: { gte: '100' } },
    }),
    ApiQuery({
      name: 'fields',
      required: false,
      description:
        'With a live query (needs `collection`): the fields of the item an event carries, as ' +
        '`fields` of `GET /data/{collection}` (`fields=total,status` or `fields=-notes`); naming ' +
        "a protected field of the caller's → 400 PROTECTED_FIELD.",
      schema: sharedSchemaRef(ITEM_FIELDS_SCHEMA),
      example: 'total,status',
    }),
  );
