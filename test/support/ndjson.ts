import { createHash } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import type { Test } from 'supertest';
import type { TestApp } from './app';
import type { KeyHolder } from './http';

export type Line = Record<string, unknown>;

/** supertest's parser for NDJSON: the body as text (gunzipped by superagent when encoded). */
export function ndjsonText(
  response: unknown,
  done: (error: Error | null, body: string) => void,
): void {
  const res = response as IncomingMessage;
  let text = '';
  res.setEncoding('utf8');
  res.on('data', (chunk: string) => (text += chunk));
  res.on('end', () => done(null, text));
  res.on('error', (error) => done(error, text));
}

export function parseLines(text: string): Line[] {
  return text
    .split('\n')
    .filter((line) => line !== '')
    .map((line) => JSON.parse(line) as Line);
}

export interface NdjsonResponse {
  status: number;
  headers: Record<string, string>;
  text: string;
  lines: Line[];
  /** The problem when the status is not 200. */
  body: Line;
}

function keyOf(holder: KeyHolder): string {
  return typeof holder === 'string' ? holder : holder.apiKey;
}

async function finish(test: Test): Promise<NdjsonResponse> {
  const res = await test.buffer(true).parse(ndjsonText);
  const text = typeof res.body === 'string' ? res.body : '';
  const ndjson = String(res.headers['content-type'] ?? '').startsWith('application/x-ndjson');
  return {
    status: res.status,
    headers: res.headers,
    text,
    lines: ndjson ? parseLines(text) : [],
    body: ndjson ? {} : (JSON.parse(text || '{}') as Line),
  };
}

/** GET `path` (default /export) as `key`, read whole. */
export function exportAs(
  t: TestApp,
  key: KeyHolder,
  query: Record<string, string> = {},
  { path = '/export', headers = {} }: { path?: string; headers?: Record<string, string> } = {},
): Promise<NdjsonResponse> {
  return finish(t.http().get(path).set('X-Api-Key', keyOf(key)).set(headers).query(query));
}

/** POST /import of `body` (lines joined, or raw) as `key`. */
export function importAs(
  t: TestApp,
  key: KeyHolder,
  body: Line[] | string | Buffer,
  query: Record<string, string> = {},
  headers: Record<string, string> = {},
): Promise<NdjsonResponse> {
  const payload = Array.isArray(body) ? body.map((line) => JSON.stringify(line)).join('\n') : body;
  return finish(
    t
      .http()
      .post('/import')
      .set('X-Api-Key', keyOf(key))
      .set('Content-Type', 'application/x-ndjson')
      .set(headers)
      .query(query)
      .send(payload),
  );
}

/** The result lines of an import response and its totals. */
export function resultsOf(response: NdjsonResponse): { results: Line[]; totals: Line } {
  const totals = response.lines.at(-1) ?? {};
  return { results: response.lines.slice(0, -1), totals };
}

/** The SHA-256 an end line gives of `lines` (each with its `\n`). */
export function digestOf(lines: string[]): string {
  const hash = createHash('sha256');
  for (const line of lines) hash.update(`${line}\n`);
  return hash.digest('hex');
}
