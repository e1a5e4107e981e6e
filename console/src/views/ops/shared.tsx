import { useState } from 'react';
import { pageCursors, unwrap, type PageCursor } from '@profile-data/client';

/**
 * Keyset paging: the cursor of the page shown (the list's `after`) and the cursors of the pages
 * before it. A page's next cursor is `pageCursors(response).next` (client/src/links.ts).
 */
export function usePager() {
  const [stack, setStack] = useState<(PageCursor | undefined)[]>([undefined]);
  const after = stack[stack.length - 1];
  return {
    after,
    page: stack.length,
    next: (cursor: PageCursor) => setStack((pages) => [...pages, cursor]),
    previous: () => setStack((pages) => (pages.length > 1 ? pages.slice(0, -1) : pages)),
    first: () => setStack([undefined]),
  };
}

/** A page of a list call: its entries (none for a 204), and the cursor of the page after it. */
export async function pageOf<R extends { data?: unknown; error?: unknown; response: Response }>(
  call: Promise<R>,
) {
  const result = await call;
  const list = (await unwrap(Promise.resolve(result))) ?? [];
  return { list, next: pageCursors(result.response).next };
}

/** Previous / next buttons under a paged table. */
export function Pager(props: {
  pager: ReturnType<typeof usePager>;
  next: PageCursor | undefined;
  label: string;
}) {
  const { pager, next } = props;
  if (pager.page === 1 && next === undefined) return null;
  return (
    <nav className="toolbar" aria-label={`${props.label} pages`}>
      <button type="button" onClick={pager.previous} disabled={pager.page === 1}>
        Previous page
      </button>
      <span>Page {pager.page}</span>
      <button
        type="button"
        onClick={() => next !== undefined && pager.next(next)}
        disabled={next === undefined}
      >
        Next page
      </button>
    </nav>
  );
}

/** A byte count for people: 52311 → "51.1 KiB". */
export function bytes(size: number): string {
  if (size < 1024) return `${size} B`;
  const units = ['KiB', 'MiB', 'GiB', 'TiB'];
  let value = size / 1024;
  let unit = 0;
  while (value >= 1024 && unit < units.length - 1) {
    value /= 1024;
    unit += 1;
  }
  return `${value.toFixed(1)} ${units[unit]}`;
}

/** A timestamp in the reader's locale; '—' for none. */
export function when(value: string | null | undefined): string {
  if (!value) return '—';
  const date = new Date(value);
  return Number.isNaN(date.getTime()) ? value : date.toLocaleString();
}

/**
 * A secret or link shown once, in a read-only field the user can select, with a Copy button;
 * `note` says what happens to it next.
 */
export function CopyField(props: { id: string; label: string; value: string; note?: string }) {
  const [copied, setCopied] = useState<'yes' | 'no' | undefined>(undefined);
  const copy = () => {
    navigator.clipboard.writeText(props.value).then(
      () => setCopied('yes'),
      () => setCopied('no'),
    );
  };
  return (
    <div className="copy-field">
      <label htmlFor={props.id}>{props.label}</label>
      <div className="copy-row">
        <input
          id={props.id}
          readOnly
          value={props.value}
          spellCheck={false}
          onFocus={(event) => event.target.select()}
        />
        <button type="button" onClick={copy}>
          Copy
        </button>
      </div>
      <p className="hint" role="status">
        {copied === 'yes' && 'Copied to the clipboard. '}
        {copied === 'no' && 'The clipboard is not available: select the text and copy it. '}
        {props.note}
      </p>
    </div>
  );
}
