import type { HttpStatus } from '@nestjs/common';

/**
 * One machine-readable error code: the HTTP status and title it maps to, and what its example in
 * the OpenAPI document shows besides them. Each module defines its codes with defineErrors next to
 * its error classes; a DomainError carries its entry, so rendering it needs no lookup.
 */
export interface ErrorEntry<Code extends string = string> {
  readonly code: Code;
  readonly status: HttpStatus;
  readonly title: string;
  /** The example problem's `detail` (else the title) and `errors` (else none). */
  readonly example?: {
    readonly detail?: string;
    readonly errors?: readonly Readonly<Record<string, string>>[];
  };
}

/** An entry as a module writes it: its code is its key. */
type EntryOfKey = Omit<ErrorEntry, 'code'>;

/** A module's codes, each entry knowing its own code. */
export type ErrorTable<Codes extends string> = { readonly [Code in Codes]: ErrorEntry<Code> };

/**
 * A module's codes from `{ CODE: { status, title } }`: `ErrorTable<'CODE' | …>`, so that a typo in
 * a code its classes use does not compile.
 */
export function defineErrors<const Entries extends Record<string, EntryOfKey>>(
  entries: Entries,
): ErrorTable<keyof Entries & string> {
  return Object.fromEntries(
    Object.entries(entries).map(([code, entry]) => [code, { code, ...entry }]),
  ) as ErrorTable<keyof Entries & string>;
}

/** Every code of the API with its entry, in the order the OpenAPI document lists them (src/error-catalog.ts). */
export type ErrorCatalog = Readonly<Record<string, ErrorEntry>>;

/** URI reference of a problem type (RFC 9457 `type`); documented in docs/errors.md, "Errors". */
export function problemType(code: string): string {
  return `urn:problem:${code.toLowerCase().replace(/_/g, '-')}`;
}
