import { ApiQuery } from '@nestjs/swagger';
import { EXPAND_SCHEMA_PATTERN } from '../query/json-guard';
import { MAX_EXPANSIONS } from './expand-request';

/** `expand` on the list and the single-item read (docs/data.md, "Expanding references"). */
export const ExpandQuery = () =>
  ApiQuery({
    name: 'expand',
    required: false,
    description:
      'References to replace by the items they name: `path:collection` pairs, comma-separated ' +
      `(\`customer:customers,lines.product:products\`), at most ${MAX_EXPANSIONS}. The value at ` +
      'a path (one array of objects on the way is crossed: `lines.product` is each line’s ' +
      '`product`) is a string id or an array of string ids; each becomes the item of that id in ' +
      'the named collection of the same namespace and branch, or `null` when there is none or ' +
      'the key may not read it (the collection’s own access rules, protected fields, expiry and ' +
      'key collection limits apply). Any other value stays as it is, and so do the references ' +
      'of an item holding more than `EXPAND_MAX_IDS_PER_ITEM` (100) ids at one path. Expanded ' +
      'items are not expanded again. `fields` paths below an expanded path (`customer.name`) ' +
      'keep the reference and apply to the expanded items. One query per expansion per page. ' +
      'An expanded single item’s ETag covers the expanded items too (a 304 only while none changed).',
    schema: { type: 'string', pattern: EXPAND_SCHEMA_PATTERN },
    example: 'customer:customers',
  });
