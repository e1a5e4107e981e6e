import { AsyncLocalStorage } from 'node:async_hooks';
import type { SchemaError } from './item-schemas';

/**
 * The schema warnings of the writes a request makes (collections whose schema's action is
 * `warn`), gathered where the writes happen and answered where the response is made: the
 * `Schema-Warnings` header, or per item in bulk and import results.
 */
const gathered = new AsyncLocalStorage<SchemaError[]>();

/** Runs `work`, answering its value with the warnings its writes noted. */
export async function collectWarnings<T>(
  work: () => Promise<T>,
): Promise<{ value: T; warnings: SchemaError[] }> {
  const warnings: SchemaError[] = [];
  const value = await gathered.run(warnings, work);
  // The request's own list (the header) has them too.
  noteWarnings(warnings);
  return { value, warnings };
}

/** Runs `work` gathering the warnings of its writes into `into` (the request's list). */
export function gatheringWarnings<T>(into: SchemaError[], work: () => T): T {
  return gathered.run(into, work);
}

/** Notes warnings of a write for the request it belongs to (nothing outside collectWarnings). */
export function noteWarnings(errors: readonly SchemaError[]): void {
  gathered.getStore()?.push(...errors);
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
