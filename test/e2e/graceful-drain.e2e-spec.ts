import type { ChildProcess } from 'node:child_process';
import { Agent } from 'node:http';
import { connect } from 'node:net';
import { MongoClient } from 'mongodb';
import { ShutdownState } from '../../src/health/shutdown.state';
import { createTestApp, testDatabaseUri, TEST_ADMIN_KEY, uniqueDbName } from '../support/app';
import { send, startService } from '../support/service-process';
import { startWireProxy, type WireProxy } from '../support/wire-proxy';
import { until } from '../support/until';
import { parseExposition, valueOf } from '../support/prometheus';

const SHUTDOWN_TIMEOUT_MS = 10_000;
const CLIENTS = 10;
/** Bounds on the load: per client, and for the whole run. */
const MAX_REQUESTS_PER_CLIENT = 300;
/** Writes answered before the database is slowed down and the signal sent. */
const ANSWERED_BEFORE_SIGTERM = 3 * CLIENTS;

interface Outcome {
  id: string;
  status?: number;
  connectionClose?: boolean;
  error?: string;
  afterSigterm: boolean;
}

/** Whether the port refuses new connections (the listener is closed). */
function refuses(port: number): Promise<boolean> {
  return new Promise((answer) => {
    const socket = connect(port, '127.0.0.1');
    socket.once('connect', () => {
      socket.destroy();
      answer(false);
    });
    socket.once('error', () => answer(true));
  });
}

/**
 * The requests in flight at SIGTERM are made so, not hoped for: the service talks to the database
 * through a proxy that holds the item inserts once the load is under way. A create whose document
 * is in a held insert cannot be answered before the proxy lets it go, which it does only once the
 * listener is closed (the drain has begun): those requests are in flight at SIGTERM for certain,
 * and they are the ones that must be told the connection closes. Every other request the client
 * had open (queued behind the held insert, or between two commands) must be answered too.
 */
describe('graceful drain', () => {
  let child: ChildProcess | undefined;
  let proxy: WireProxy | undefined;

  afterAll(async () => {
    if (child && child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    await proxy?.close();
  });

  it('finishes in-flight keep-alive writes on SIGTERM, resets none, and exits 0 quickly', async () => {
    const dbName = uniqueDbName(__filename);
    const uri = testDatabaseUri();
    proxy = await startWireProxy(uri);
    const service = await startService({
      MONGODB_DB_NAME: dbName,
      MONGODB_URI: proxy.uri,
      SHUTDOWN_TIMEOUT_MS: String(SHUTDOWN_TIMEOUT_MS),
      // The driver's socket timeout (above the query timeout) must not end a held insert.
      QUERY_TIMEOUT_MS: '120000',
    });
    const { port, exited } = service;
    const proc = service.process;
    child = proc;

    const created = await send(
      undefined,
      port,
      'POST',
      '/admin/users',
      { 'X-Api-Key': TEST_ADMIN_KEY },
      { email: 'drain@example.com' },
    );
    expect(created.status).toBe(200);
    const apiKey = (JSON.parse(created.body) as { apiKey: string }).apiKey;

    let sigtermAt = 0;
    const outcomes: Outcome[] = [];
    const agents = Array.from(
      { length: CLIENTS },
      () => new Agent({ keepAlive: true, maxSockets: 1 }),
    );
    const clients = agents.map(async (agent, client) => {
      for (let n = 0; n < MAX_REQUESTS_PER_CLIENT; n++) {
        const id = `c${client}-${n}`;
        const outcome: Outcome = { id, afterSigterm: sigtermAt > 0 };
        outcomes.push(outcome);
        try {
          const reply = await send(
            agent,
            port,
            'POST',
            '/data/drain',
            { 'X-Api-Key': apiKey },
            { item: { _id: id, client, n } },
          );
          outcome.status = reply.status;
          outcome.connectionClose = reply.headers.connection === 'close';
        } catch (error) {
          outcome.error = (error as NodeJS.ErrnoException).code ?? String(error);
          // The server is gone or refusing: this client is done.
          return;
        }
      }
    });

    const answeredSoFar = () => outcomes.filter((o) => o.status !== undefined).length;
    await until('the load is under way', () => answeredSoFar() >= ANSWERED_BEFORE_SIGTERM);
    const db = new MongoClient(uri, { serverSelectionTimeoutMS: 5000 });
    const registry = await db.db(dbName).collection('data_collections').findOne({ name: 'drain' });
    // The items go to the tenant's database, which the registry entry names.
    const itemsDb = (registry?.database as string | undefined) ?? dbName;
    proxy.hold((command) => command.insert === registry?.physical && command.$db === itemsDb);
    // Concurrent creates share an insert command (src/common/mongo/grouped-inserts.ts): one is
    // held, and the creates that come meanwhile queue behind it in the service, so every client
    // ends up with a request the service cannot answer before the release.
    await until('every client has a write waiting on the database', async () => {
      if ((proxy?.held() ?? 0) === 0) return false;
      const metrics = await send(undefined, port, 'GET', '/metrics');
      return valueOf(parseExposition(metrics.body), 'http_requests_in_flight') === CLIENTS;
    });
    const inFlight = outcomes.filter((o) => o.status === undefined && o.error === undefined);
    expect(inFlight).toHaveLength(CLIENTS);

    sigtermAt = Date.now();
    proc.kill('SIGTERM');
    await until('the listener is closed', () => refuses(port));
    proxy.release();
    const { code, at } = await exited;
    await Promise.all(clients);
    agents.forEach((agent) => agent.destroy());

    expect({ code, stderr: service.stderr() }).toEqual({ code: 0, stderr: '' });
    expect(at - sigtermAt).toBeLessThan(SHUTDOWN_TIMEOUT_MS / 2);

    const answered = outcomes.filter((o) => o.status !== undefined);
    expect(answered.length).toBeGreaterThan(CLIENTS);
    expect(answered.filter((o) => o.status !== 200)).toEqual([]);
    // Requests open at SIGTERM were answered, none reset.
    expect(inFlight.filter((o) => o.status !== 200)).toEqual([]);
    // Those held at the database were answered after the drain began: told the connection closes.
    const heldIds = new Set(
      proxy
        .heldCommands()
        .flatMap((command) => (command.documents as { _id: unknown }[]).map((d) => String(d._id))),
    );
    const heldAtSigterm = inFlight.filter((o) => heldIds.has(o.id));
    expect(heldAtSigterm.length).toBeGreaterThan(0);
    expect(heldAtSigterm.filter((o) => !o.connectionClose)).toEqual([]);

    try {
      const ids = new Set(
        (
          await db
            .db(itemsDb)
            .listCollections({}, { nameOnly: true })
            .toArray()
            .then(async (collections) => {
              const all: string[] = [];
              for (const { name } of collections) {
                const docs = await db
                  .db(itemsDb)
                  .collection<{ _id: unknown }>(name)
                  .find({}, { projection: { _id: 1 } })
                  .toArray();
                all.push(...docs.map((d) => String(d._id)));
              }
              return all;
            })
        ).filter((id) => /^c\d+-\d+$/.test(id)),
      );
      // Every acknowledged write is stored.
      expect(answered.filter((o) => !ids.has(o.id)).map((o) => o.id)).toEqual([]);
      // A request that failed at the connection never reached a handler: nothing was written.
      const failed = outcomes.filter((o) => o.error !== undefined);
      expect(failed.filter((o) => ids.has(o.id))).toEqual([]);
      expect(failed.every((o) => o.afterSigterm)).toBe(true);
      await db.db(itemsDb).dropDatabase();
      await db.db(dbName).dropDatabase();
    } finally {
      await db.close();
    }

    // Production stdout: JSON lines only.
    const lines = service
      .stdout()
      .split('\n')
      .filter((line) => line.trim() !== '');
    expect(lines.length).toBeGreaterThan(0);
    for (const line of lines) expect(() => JSON.parse(line) as unknown).not.toThrow();
  }, 150_000); // a local run may first rebuild dist/

  it('fails readiness at once while draining, without touching the database', async () => {
    const t = await createTestApp(__filename);
    try {
      await t.http().get('/health/ready').expect(200);
      t.app.get(ShutdownState).startDraining();
      const res = await t.http().get('/health/ready');
      expect(res.status).toBe(503);
      expect(res.headers['content-type']).toMatch(/^application\/problem\+json/);
      await t.http().get('/health').expect(200);
    } finally {
      await t.close();
    }
  });
});
