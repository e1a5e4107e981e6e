import { request as httpRequest, type ClientRequest, type IncomingMessage } from 'node:http';
import type { Document } from 'mongodb';
import {
  createTestApp,
  testDatabaseUri,
  TEST_ADMIN_KEY,
  uniqueDbName,
  type TestApp,
} from '../support/app';
import { createUser, type TestUser } from '../support/factories';
import { as } from '../support/http';
import { exportAs, type Line } from '../support/ndjson';
import { startOwnDatabase, type OwnDatabase } from '../support/own-database';
import { startService, type ServiceProcess } from '../support/service-process';
import { until } from '../support/until';
import { startWireProxy, type WireProxy } from '../support/wire-proxy';

/**
 * How many item lines one import writes together at most, and how many lines its writes under way
 * hold before it reads no further (src/data/transfer/import-batch-lines.ts, namespace-import.ts).
 */
const IMPORT_BATCH_LINES = 100;
const IMPORT_WINDOW_LINES = 200;

/** An import whose body the test writes line by line while it reads the result lines. */
interface OpenImport {
  results: Line[];
  send(lines: Line[]): void;
  end(): void;
  /** Breaks the connection, as a client that crashed or went offline. */
  cut(): void;
  /** Resolves when the response has ended (the totals are the last result). */
  finished: Promise<void>;
}

async function listen(t: TestApp): Promise<string> {
  await t.app.listen(0, '127.0.0.1');
  return (await t.app.getUrl()).replace('[::1]', '127.0.0.1');
}

function openImport(base: string, user: Pick<TestUser, 'apiKey'>): OpenImport {
  const results: Line[] = [];
  let req: ClientRequest | undefined;
  const finished = new Promise<void>((resolve) => {
    req = httpRequest(`${base}/import`, {
      method: 'POST',
      headers: { 'X-Api-Key': user.apiKey, 'Content-Type': 'application/x-ndjson' },
    });
    req.on('response', (res: IncomingMessage) => {
      expect(res.statusCode).toBe(200);
      let buffered = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => {
        buffered += chunk;
        const lines = buffered.split('\n');
        buffered = lines.pop() ?? '';
        for (const line of lines) if (line !== '') results.push(JSON.parse(line) as Line);
      });
      res.on('end', () => resolve());
      res.on('error', () => resolve());
    });
    req.on('error', () => resolve());
    req.flushHeaders();
  });
  const client = req as ClientRequest;
  return {
    results,
    send: (lines) => client.write(lines.map((line) => `${JSON.stringify(line)}\n`).join('')),
    end: () => client.end(),
    cut: () => client.destroy(),
    finished,
  };
}

const itemLine = (id: string): Line => ({ type: 'item', collection: 'c', item: { _id: id } });
const ids = (prefix: string, n: number) => Array.from({ length: n }, (_, i) => `${prefix}-${i}`);

describe('import faults', () => {
  describe('the client going away mid-import', () => {
    let proxy: WireProxy;
    let t: TestApp;
    let base: string;

    beforeAll(async () => {
      proxy = await startWireProxy(testDatabaseUri());
      t = await createTestApp(__filename, { MONGODB_URI: proxy.uri });
      base = await listen(t);
    });

    afterAll(async () => {
      proxy?.release();
      await t?.close();
      await proxy?.close();
    });

    it('keeps every line it reported written, and writes at most the lines in flight when the client left', async () => {
      const user = await createUser(t);
      const upload = openImport(base, user);
      // More lines than a full window holds: the import reads no further.
      const late = IMPORT_WINDOW_LINES + 1000;
      const heldIds: string[] = [];
      try {
        upload.send(ids('early', 10).map(itemLine));
        await until('the first ten results', () => upload.results.length === 10);
        expect(upload.results.map((r) => r.status)).toEqual(Array(10).fill(201));

        // The next lines' inserts are held at the database: the import has as many writes
        // under way as it takes at once, and reads no further until one of them is done.
        proxy.hold((command) => lateInsert(command) && heldIds.push(...idsOf(command)) > 0);
        upload.send(ids('late', late).map(itemLine));
        await until('a window of lines in flight', () => heldIds.length >= IMPORT_WINDOW_LINES);
      } finally {
        upload.cut();
      }
      await upload.finished;
      // The held inserts go through; any further one would be held again (and show).
      proxy.release();
      proxy.hold(lateInsert);
      const heldSoFar = proxy.held();
      const count = async () =>
        ((await as(t, user).get('/data/c/count').expect(200)).body as { count: number }).count;
      await until(
        'the writes in flight are done',
        async () => (await count()) === 10 + heldIds.length,
      );
      const exported = await exportAs(t, user, { collections: 'c' });
      const storedIds = exported.lines
        .filter((line) => line.type === 'item')
        .map((line) => (line.item as Line)._id as string);
      const reported = upload.results.filter((r) => r.status === 201).map((r) => r._id as string);
      expect(reported).toEqual(ids('early', 10));
      for (const id of reported) expect(storedIds).toContain(id);
      // What was written is what was in flight: the first lines after the early ones, in order,
      // a window and at most one batch more (the one that filled it).
      expect(heldIds).toEqual(ids('late', heldIds.length));
      expect(heldIds.length).toBeLessThan(IMPORT_WINDOW_LINES + IMPORT_BATCH_LINES);
      expect(storedIds.filter((id) => id.startsWith('late-')).sort()).toEqual([...heldIds].sort());
      // Nothing beyond the window was read after the client left.
      await new Promise((resolve) => setTimeout(resolve, 500));
      expect(proxy.held()).toBe(heldSoFar);
      expect(await count()).toBe(10 + heldIds.length);
      proxy.release();
    });
    it('locks nothing during an export: writes go on, and the feed after its position has them', async () => {
      const user = await createUser(t);
      const api = as(t, user);
      for (let batch = 0; batch < 2; batch += 1) {
        const items = Array.from({ length: 400 }, (_, i) => ({ n: batch * 400 + i }));
        await api.post('/data/big/bulk', { items }).expect(200);
      }
      // The export is under way on the server: its second batch is held at the database.
      let getMores = 0;
      proxy.hold((command) => {
        if (command.getMore === undefined) return false;
        getMores += 1;
        return true;
      });
      let text = '';
      const done = new Promise<void>((resolve, reject) => {
        const req = httpRequest(
          `${base}/export`,
          { headers: { 'X-Api-Key': user.apiKey } },
          (res) => {
            res.setEncoding('utf8');
            res.on('data', (chunk: string) => (text += chunk));
            res.on('end', () => resolve());
            res.on('error', reject);
          },
        );
        req.on('error', reject);
        req.end();
      });
      try {
        await until('the export waits for its second batch', () => getMores === 1);
        await api.post('/data/big', { item: { _id: 'written-during', n: -1 } }).expect(200);
        await api.put('/data/big', { filter: { n: 0 }, values: { changed: true } }).expect(200);
        await api.post('/data/other', { item: { _id: 'elsewhere' } }).expect(200);
      } finally {
        proxy.release();
      }
      await done;
      const lines = text.split('\n').filter((line) => line !== '');
      const manifest = JSON.parse(lines[0] as string) as Line;
      expect(JSON.parse(lines.at(-1) as string)).toMatchObject({ type: 'end' });
      const events = (
        await api.get('/events', { query: { after: String(manifest.feedPosition) } }).expect(200)
      ).body.events as Line[];
      const changed = events.map((e) => [e.resource, e.type, e.collection, (e.data as Line)?._id]);
      expect(changed).toEqual(
        expect.arrayContaining([
          ['item', 'created', 'big', 'written-during'],
          ['item', 'updated', 'big', expect.any(String)],
          ['item', 'created', 'other', 'elsewhere'],
        ]),
      );
    });
  });

  describe('the database freezing mid-import', () => {
    let database: OwnDatabase;
    let t: TestApp;
    let base: string;

    beforeAll(async () => {
      database = await startOwnDatabase('import-frozen');
      t = await createTestApp(__filename, {
        MONGODB_URI: database.uri,
        DB_SERVER_SELECTION_TIMEOUT_MS: '1500',
      });
      base = await listen(t);
    });

    afterAll(async () => {
      database?.thaw();
      await t?.close();
      await database?.stop();
    });

    it('says in its results what was written and where it stopped', async () => {
      const user = await createUser(t);
      const upload = openImport(base, user);
      try {
        upload.send(ids('before', 10).map(itemLine));
        await until('the first ten results', () => upload.results.length === 10);
        database.freeze();
        upload.send(ids('during', 10).map(itemLine));
        upload.end();
        await upload.finished;
      } finally {
        database.thaw();
        upload.cut();
      }
      const totals = upload.results.at(-1) as Line;
      const results = upload.results.slice(0, -1);
      expect(totals).toMatchObject({
        type: 'totals',
        outcome: 'stopped',
        stoppedAt: 11,
        code: 'DATABASE_UNAVAILABLE',
        created: 10,
      });
      // Every line read has its result; the lines in flight at the stop (the batches of the
      // lines read by then) report 503, and no line after them was read.
      const read = totals.lines as number;
      expect(read).toBeGreaterThanOrEqual(11);
      expect(read).toBeLessThanOrEqual(20);
      expect(results.map((r) => r.line)).toEqual(Array.from({ length: read }, (_, i) => i + 1));
      expect(results.slice(10).every((r) => r.status === 503)).toBe(true);

      // Thawed: what was reported written is there; a line reported 503 may or may not be
      // (its write may have reached the database before it froze), and no line after the stop.
      await until('the database answers again', async () => {
        const res = await as(t, user).get('/data/c/count');
        return res.status === 200;
      });
      const stored = (
        (
          await as(t, user)
            .get('/data/c', { query: { limit: '100' } })
            .expect(200)
        ).body as Line[]
      ).map((item) => item._id as string);
      for (const id of ids('before', 10)) expect(stored).toContain(id);
      const unreported = stored.filter((id) => !id.startsWith('before-'));
      for (const id of unreported) expect(ids('during', read - 10)).toContain(id);
    });
  });

  describe('SIGTERM during an export and an import', () => {
    let proxy: WireProxy | undefined;
    let service: ServiceProcess | undefined;

    afterAll(async () => {
      proxy?.release();
      await service?.kill();
      await proxy?.close();
    });

    /**
     * Both are made to be under way when the signal comes, not hoped to be: a proxy holds the
     * export's next batch (its getMore) and the import's item inserts.
     */
    it('cuts the export (no end line: the client resumes elsewhere) and ends the import with its totals, then exits 0', async () => {
      proxy = await startWireProxy(testDatabaseUri());
      service = await startService({
        MONGODB_DB_NAME: uniqueDbName(__filename),
        MONGODB_URI: proxy.uri,
        SHUTDOWN_TIMEOUT_MS: '15000',
        QUERY_TIMEOUT_MS: '120000',
      });
      const created = await service.send(
        'POST',
        '/admin/users',
        { 'X-Api-Key': TEST_ADMIN_KEY },
        { email: 'transfer-sigterm@example.com' },
      );
      const apiKey = (JSON.parse(created.body) as { apiKey: string }).apiKey;
      const auth = { 'X-Api-Key': apiKey };
      for (let batch = 0; batch < 3; batch += 1) {
        const items = Array.from({ length: 400 }, (_, i) => ({ n: batch * 400 + i }));
        expect((await service.send('POST', '/data/big/bulk', auth, { items })).status).toBe(200);
      }
      const base = `http://127.0.0.1:${service.port}`;
      const upload = openImport(base, { apiKey });
      upload.send(ids('early', 10).map(itemLine));
      await until('the first ten import results', () => upload.results.length === 10);

      let getMores = 0;
      const heldIds: string[] = [];
      proxy.hold((command) => {
        if (command.getMore !== undefined) getMores += 1;
        else if (lateInsert(command)) heldIds.push(...idsOf(command));
        else return false;
        return true;
      });
      const download = { text: '', ended: false, failed: false };
      const exportDone = new Promise<void>((resolve) => {
        const req = httpRequest(`${base}/export`, { headers: auth }, (res) => {
          res.setEncoding('utf8');
          res.on('data', (chunk: string) => (download.text += chunk));
          res.on('end', () => ((download.ended = true), resolve()));
          res.on('error', () => ((download.failed = true), resolve()));
          res.on('aborted', () => (download.failed = true));
        });
        req.on('error', () => ((download.failed = true), resolve()));
        req.end();
      });
      await until('the export waits for its second batch', () => getMores === 1);
      upload.send(ids('late', 20).map(itemLine));
      await until('the late lines in flight', () => heldIds.length === 20);

      service.process.kill('SIGTERM');
      await exportDone;
      // Lines of its first batch arrived (those of whole 64 KB chunks), and it was cut without
      // an end line.
      const received = download.text.split('\n').filter((l) => l.includes('"type":"item"'));
      expect(received.length).toBeGreaterThan(0);
      expect(received.length).toBeLessThanOrEqual(500);
      expect(download.text).not.toContain('"type":"end"');
      expect(download.failed || !download.ended).toBe(true);

      // The writes in flight finish; the import reads no further line and answers its totals.
      proxy.release();
      await upload.finished;
      const totals = upload.results.at(-1) as Line;
      expect(totals).toMatchObject({
        type: 'totals',
        outcome: 'stopped',
        stoppedAt: 10 + 20 + 1,
        code: 'SHUTTING_DOWN',
        created: 10 + 20,
      });
      expect(upload.results.at(-2)).toMatchObject({ status: 503, code: 'SHUTTING_DOWN' });
      const { code } = await service.exited;
      expect(code).toBe(0);
      expect(service.stderr()).toBe('');
    });
  });
});

/** The insert of an item whose `_id` starts with `late-`. */
function lateInsert(command: Document): boolean {
  return (
    Array.isArray(command.documents) &&
    command.documents.some((doc: Document) => String(doc._id).startsWith('late-'))
  );
}

/** The `_id`s of the documents an insert command carries. */
function idsOf(command: Document): string[] {
  return (command.documents as Document[]).map((doc) => String(doc._id));
}
