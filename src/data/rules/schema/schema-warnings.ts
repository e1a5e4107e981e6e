import type { Reply } from '../../../common/http/reply';
import type { SchemaError } from './item-schemas';

/** The response header that lists where a written item breaks a `warn` schema. */
export const SCHEMA_WARNINGS_HEADER = 'Schema-Warnings';

/**
 * A write's answer with the violations of the `warn` schemas it let through (none: empty). The
 * write paths return them with what they wrote (SchemaEnforcement answers them); a route answers
 * them in the `Schema-Warnings` header (answerWarnings), bulk and import results per item.
 */
export interface Warned<T> {
  value: T;
  warnings: SchemaError[];
}

/**
 * Adds the `Schema-Warnings` header of the warnings of the writes a handler made to its answer
 * (a kept response then keeps it for a replay); none when they are empty.
 */
export function answerWarnings<T>(reply: Reply<T>, warnings: readonly SchemaError[]): Reply<T> {
  return reply.header(SCHEMA_WARNINGS_HEADER, schemaWarningsHeader(warnings) ?? undefined);
}

/** Longest `Schema-Warnings` value: the entries past it are left out (the write happened). */
const MAX_HEADER_CHARS = 4096;

/**
 * The `Schema-Warnings` header: `<pointer> <keyword>` pairs, comma-separated, each once. The
 * pointer is in its URI fragment form (RFC 6901 §6: `#` is the item, `#/address/city` a field),
 * so a space, a comma or any character beyond ASCII in a field name is percent-encoded.
 */
export function schemaWarningsHeader(warnings: readonly SchemaError[]): string | null {
  const pairs = [...new Set(warnings.map((w) => `${fragmentOf(w.pointer)} ${w.keyword}`))];
  let value = '';
  for (const pair of pairs) {
    const next = value === '' ? pair : `${value}, ${pair}`;
    if (next.length > MAX_HEADER_CHARS) break;
    value = next;
  }
  return value === '' ? null : value;
}

function fragmentOf(pointer: string): string {
  return `#${pointer
    .split('/')
    .map((segment) =>
      encodeURIComponent(segment).replace(
        /[!'()*]/g,
        (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`,
      ),
    )
    .join('/')}`;
}
