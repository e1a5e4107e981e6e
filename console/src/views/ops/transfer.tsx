import { useEffect, useRef, useState } from 'react';
import {
  exportNamespace,
  importNamespace,
  type ImportLine,
  type TransferOptions,
} from '@profile-data/client';
import { unwrap, useApi } from '../../api';
import { ActionError, useAction } from '../../ui/action';
import { useLoad } from '../../ui/async';
import { ListTable } from '../../ui/list-table';
import { ProblemView } from '../../ui/problem';

/** An import's answer to one line it refused. */
type FailedLine = Exclude<ImportLine, { type: 'totals' }>;

/** Export of the namespace to a file, and import of an NDJSON file into it. */
export function TransferView() {
  return (
    <section aria-labelledby="transfer-title">
      <h1 id="transfer-title">Export / import</h1>
      <ExportPanel />
      <ImportPanel />
    </section>
  );
}

type Saved = { url: string; name: string; items: number; bytes: number };

function ExportPanel() {
  const { client, options, me } = useApi();
  const collections = useLoad(
    async (signal) => (await unwrap(client.GET('/data', { signal }))) ?? [],
    [client],
  );
  const [chosen, setChosen] = useState<string[]>([]);
  const [withFiles, setWithFiles] = useState(true);
  const [received, setReceived] = useState<
    { lines: number; items: number; files: number } | undefined
  >();
  const [saved, setSaved] = useState<Saved | undefined>(undefined);
  const [handed, setHanded] = useState<string | undefined>(undefined);
  const savedUrl = useRef<string | undefined>(undefined);
  const forget = () => {
    if (savedUrl.current) URL.revokeObjectURL(savedUrl.current);
    savedUrl.current = undefined;
  };
  useEffect(() => forget, []);

  const run = useAction(async () => {
    forget();
    setSaved(undefined);
    setHanded(undefined);
    const lines: string[] = [];
    let items = 0;
    let files = 0;
    setReceived({ lines: 0, items: 0, files: 0 });
    const filesParam = withFiles ? ('true' as const) : ('false' as const);
    const query =
      chosen.length > 0
        ? { collections: chosen.join(','), files: filesParam }
        : { files: filesParam };
    for await (const record of exportNamespace(options, query)) {
      lines.push(JSON.stringify(record));
      if (record.type === 'item') items += 1;
      if (record.type === 'file') files += 1;
      if (lines.length % 50 === 0 || record.type !== 'item')
        setReceived({ lines: lines.length, items, files });
    }
    setReceived({ lines: lines.length, items, files });
    const blob = new Blob([lines.join('\n') + '\n'], { type: 'application/x-ndjson' });
    const url = URL.createObjectURL(blob);
    savedUrl.current = url;
    const stamp = new Date().toISOString().replace(/[:.]/g, '-');
    setSaved({
      url,
      name: `export-${me.branch || 'standard'}-${stamp}.ndjson`,
      items,
      bytes: blob.size,
    });
  });

  const toggle = (name: string, on: boolean) =>
    setChosen((now) => (on ? [...now, name] : now.filter((each) => each !== name)));

  return (
    <form
      className="panel"
      aria-labelledby="export-title"
      onSubmit={(event) => {
        event.preventDefault();
        run.run();
      }}
    >
      <h2 id="export-title">Export</h2>
      <p className="hint">
        The items of the namespace in branch “{me.branch || 'standard'}”, and its files with their
        bytes when chosen, as NDJSON, ready for an import.
      </p>
      {collections.state === 'error' && (
        <ProblemView error={collections.error} onRetry={collections.reload} />
      )}
      {collections.state === 'ready' && collections.data.length > 0 && (
        <fieldset>
          <legend>Collections (none chosen: all of them)</legend>
          <div className="choices">
            {collections.data.map((collection) => (
              <label key={collection.name} className="choice">
                <input
                  type="checkbox"
                  checked={chosen.includes(collection.name)}
                  onChange={(event) => toggle(collection.name, event.target.checked)}
                />
                {collection.name}
              </label>
            ))}
          </div>
        </fieldset>
      )}
      <label className="choice">
        <input
          type="checkbox"
          checked={withFiles}
          onChange={(event) => setWithFiles(event.target.checked)}
        />
        Include files
      </label>
      <div className="toolbar">
        <button type="submit" className="primary" disabled={run.busy}>
          {run.busy ? 'Exporting…' : 'Export'}
        </button>
        {received && (
          <span role="status" aria-live="polite">
            {received.lines} lines received, {received.items} items, {received.files} files
          </span>
        )}
      </div>
      <ActionError error={run.error} />
      {saved && (
        <p>
          <a
            href={saved.url}
            download={saved.name}
            onClick={() => {
              // The save has taken the bytes once it began: the object URL goes afterwards.
              const url = saved.url;
              setHanded(saved.name);
              setTimeout(() => {
                if (savedUrl.current === url) forget();
                setSaved((now) => (now?.url === url ? undefined : now));
              }, 1000);
            }}
          >
            Save the export ({saved.items} items, {saved.bytes} bytes)
          </a>
        </p>
      )}
      {handed && !saved && (
        <p className="hint" role="status">
          {handed} was handed to the browser to save.
        </p>
      )}
    </form>
  );
}

/**
 * A streamed request body needs HTTP/2 in a browser: the lines of a file are at hand anyway, so
 * the body is gathered and sent whole, while the results still stream back line by line.
 */
const wholeBodyFetch: typeof fetch = async (input, init) => {
  const request = new Request(input, init);
  if (!request.body) return fetch(request);
  const body = await request.blob();
  return fetch(request.url, {
    method: request.method,
    headers: request.headers,
    body,
    signal: request.signal,
  });
};

function ImportPanel() {
  const { options } = useApi();
  const [file, setFile] = useState<File | undefined>(undefined);
  const [mode, setMode] = useState<'insert' | 'upsert'>('insert');
  const [dryRun, setDryRun] = useState(false);
  const [results, setResults] = useState<{ lines: number; failed: FailedLine[] } | undefined>();
  const [totals, setTotals] = useState<Extract<ImportLine, { type: 'totals' }> | undefined>();

  const run = useAction(async (chosen: File) => {
    setTotals(undefined);
    setResults({ lines: 0, failed: [] });
    const lines = (await chosen.text()).split('\n').filter((line) => line.trim() !== '');
    const transfer: TransferOptions = { ...options, fetch: wholeBodyFetch };
    let count = 0;
    const failed: FailedLine[] = [];
    const query = { mode, dryRun: dryRun ? ('true' as const) : ('false' as const) };
    for await (const line of importNamespace(transfer, lines, query)) {
      if (line.type === 'totals') setTotals(line);
      else {
        count += 1;
        if (line.status >= 400 && failed.length < 100) failed.push(line);
        if (count % 50 === 0) setResults({ lines: count, failed: [...failed] });
      }
    }
    setResults({ lines: count, failed });
  });

  return (
    <form
      className="panel"
      aria-labelledby="import-title"
      onSubmit={(event) => {
        event.preventDefault();
        if (file) run.run(file);
      }}
    >
      <h2 id="import-title">Import</h2>
      <div className="form-grid">
        <label htmlFor="import-file">NDJSON file</label>
        <input
          id="import-file"
          type="file"
          accept=".ndjson,.jsonl,application/x-ndjson"
          onChange={(event) => setFile(event.target.files?.[0])}
        />
        <label htmlFor="import-mode">Mode</label>
        <select
          id="import-mode"
          value={mode}
          onChange={(event) => setMode(event.target.value === 'upsert' ? 'upsert' : 'insert')}
        >
          <option value="insert">insert (an existing _id is refused)</option>
          <option value="upsert">upsert (an existing _id is replaced)</option>
        </select>
        <label htmlFor="import-dry-run">Dry run (write nothing)</label>
        <input
          id="import-dry-run"
          type="checkbox"
          checked={dryRun}
          onChange={(event) => setDryRun(event.target.checked)}
        />
      </div>
      <div className="toolbar">
        <button type="submit" className="primary" disabled={!file || run.busy}>
          {run.busy ? 'Importing…' : 'Import'}
        </button>
        {results && (
          <span role="status" aria-live="polite">
            {results.lines} result lines so far
          </span>
        )}
      </div>
      <ActionError error={run.error} />
      {totals && (
        <div className={totals.outcome === 'complete' && totals.failed === 0 ? 'ok' : ''}>
          <h3>Totals</h3>
          <p role="status" aria-label="Import totals">
            {totals.outcome === 'complete'
              ? 'Complete'
              : `Stopped at line ${totals.stoppedAt ?? '?'}`}
            {totals.dryRun ? ' (dry run: nothing written)' : ''}: {totals.lines} lines,{' '}
            {totals.created} created, {totals.replaced} replaced, {totals.failed} failed.
            {totals.code ? ` ${totals.code}: ${totals.detail ?? ''}` : ''}
          </p>
        </div>
      )}
      {results && (
        <ListTable
          rows={results.failed}
          rowKey={(line) => String(line.line)}
          className="ops-table"
          caption={{ text: 'Lines that failed' }}
          columns={[
            { header: 'Line', cell: (line) => line.line },
            { header: 'Status', cell: (line) => line.status },
            { header: 'Code', cell: (line) => line.code ?? '' },
            { header: 'Detail', cell: (line) => line.detail ?? '' },
          ]}
        />
      )}
    </form>
  );
}
