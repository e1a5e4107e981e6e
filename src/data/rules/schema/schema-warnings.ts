import type { Response } from 'express';
import { tap, type Observable } from 'rxjs';
import type { CustomerPrincipal, Principal } from '../../../auth';
import type { SchemaError } from './item-schemas';

/** The response header that lists where a written item breaks a `warn` schema. */
export const SCHEMA_WARNINGS_HEADER = 'Schema-Warnings';

/**
 * The schema warnings of the writes a request makes (collections whose schema's action is
 * `warn`), gathered where the writes happen and answered where the response is made: the
 * `Schema-Warnings` header, or per item in bulk and import results.
 *
 * A list travels with the principal a write is made for: ApiKeyGuard makes a fresh principal
 * object per request, and a bulk item or an import line gets its own copy (collectWarnings). Not
 * an AsyncLocalStorage: on Node.js 20 and 22 the first one in use turns on promise hooks for the
 * whole process, and every request after it pays for them.
 */
const lists = new WeakMap<CustomerPrincipal, SchemaError[]>();

/** The writes made for `principal` note their warnings into `into` (the request's list). */
export function gatherWarnings(principal: CustomerPrincipal, into: SchemaError[]): void {
  lists.set(principal, into);
}

/**
 * Runs `work` for a copy of `principal` that gathers its own warnings, answering its value with
 * them; the principal's own list (the request's header) gets them too.
 */
export async function collectWarnings<T>(
  principal: CustomerPrincipal,
  work: (own: CustomerPrincipal) => Promise<T>,
): Promise<{ value: T; warnings: SchemaError[] }> {
  const own = { ...principal };
  const warnings: SchemaError[] = [];
  lists.set(own, warnings);
  const value = await work(own);
  noteWarnings(principal, warnings);
  return { value, warnings };
}

/** Notes warnings of a write made for `principal` (nothing when no list gathers them). */
export function noteWarnings(principal: CustomerPrincipal, errors: readonly SchemaError[]): void {
  if (errors.length > 0) lists.get(principal)?.push(...errors);
}

/**
 * `answered` (a request's handling) with the warnings of the writes made for `principal` in
 * `res`'s `Schema-Warnings` header, set when the handler answers.
 */
export function answeringWarnings(
  principal: Principal | undefined,
  res: Response,
  answered: Observable<unknown>,
): Observable<unknown> {
  if (!principal || principal.kind === 'operator') return answered;
  const warnings: SchemaError[] = [];
  gatherWarnings(principal, warnings);
  return answered.pipe(
    tap(() => {
      const header = schemaWarningsHeader(warnings);
      if (header !== null && !res.headersSent) res.setHeader(SCHEMA_WARNINGS_HEADER, header);
    }),
  );
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
