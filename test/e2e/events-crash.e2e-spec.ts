import { Agent } from 'node:http';
import { MongoClient, type Document } from 'mongodb';
import { testDatabaseUri, TEST_ADMIN_KEY, uniqueDbName } from '../support/app';
import { send, startService, type ServiceProcess } from '../support/service-process';
import { startWireProxy, type WireProxy } from '../support/wire-proxy';
import { until } from '../support/until';

/**
 * No change is missing from the feed when the process dies between a change and its event. The
 * service talks to the database through a proxy; eight concurrent writers write, then the proxy
 * holds every insert into the feed, so the next write of each writer stops after its intent and
 * its item are stored and before its event. The service is SIGKILLed there, started again on the
 * same database, and the feed must hold every write answered 200 and every item stored — the
 * cut-off ones only the reconciler can have recorded. The proxy also holds every deletion of an
 * intent from the start: a write is answered without waiting for its intent's deletion (which
 * runs in the background), and the crash leaves the intents of the acknowledged writes behind
 * too; the reconciler must delete those without recording their writes twice. Where the crash
 * lands is set by the proxy, not by the scheduler: every run leaves one intent per write.
 */
const WRITERS = 8;
const ROUNDS = 6;
const ENV = {
  EVENTS_INTENT_GRACE_MS: '500',
  EVENTS_POLL_MS: '100',
  EVENTS_SWEEP_MS: '100',
  LOG_LEVEL: 'warn',
};
let service: ServiceProcess | undefined;
let proxy: WireProxy | undefined;

afterAll(async () => {
  await service?.kill();
  await proxy?.close();
});

it('has an event for every write stored before a SIGKILL between writes and events, once the service is back', async () => {
  const dbName = uniqueDbName(__filename);
  proxy = await startWireProxy(testDatabaseUri());
  service = await startService({
    ...ENV,
    MONGODB_DB_NAME: dbName,
    MONGODB_URI: proxy.uri,
    // The driver's socket timeout (above the query timeout) would end a held insert, and the
    // write would then be answered without its event: it must not fire before the SIGKILL.
    QUERY_TIMEOUT_MS: '120000',
  });
  const created = await service.send(
    'POST',
    '/admin/users',
    { 'X-Api-Key': TEST_ADMIN_KEY },
    {
      email: 'crash-feed@example.com',
    },
  );
  const key = { 'X-Api-Key': (JSON.parse(created.body) as { apiKey: string }).apiKey };

  const port = service.port;
  const agents = Array.from(
    { length: WRITERS },
    () => new Agent({ keepAlive: true, maxSockets: 1 }),
  );
  const write = (w: number, id: string) =>
    send(agents[w], port, 'POST', '/data/load', key, { item: { _id: id } }).catch(() => undefined);

  // Concurrent writes that go all the way: answered, events appended; their intents' deletions
  // are held, and the answers must not wait for them.
  const intentDeletion = (command: Document) =>
    command.delete === 'event_intents' && command.$db === dbName;
  proxy.hold(intentDeletion);
  const acknowledged: string[] = [];
  await Promise.all(
    agents.map(async (_, w) => {
      for (let i = 0; i < ROUNDS; i += 1) {
        const reply = await write(w, `w${w}-${i}`);
        if (reply?.status === 200) acknowledged.push(`w${w}-${i}`);
      }
    }),
  );
  expect(acknowledged).toHaveLength(WRITERS * ROUNDS);

  // The feed's inserts go no further from here: one more write per writer, all at once, each
  // stopping between its stored item and its event.
  proxy.hold(
    (command) => intentDeletion(command) || (command.insert === 'events' && command.$db === dbName),
  );
  const cutOff = agents.map((_, w) => `w${w}-${ROUNDS}`);
  const inFlight = cutOff.map((id, w) => write(w, id));

  const client = await MongoClient.connect(testDatabaseUri());
  try {
    const db = client.db(dbName);
    const registry = await db.collection('data_collections').findOne({ name: 'load' });
    // The items are in the tenant's database, which the registry entry names.
    const items = client
      .db((registry?.database as string | undefined) ?? dbName)
      .collection(registry?.physical as string);
    const intents = db.collection('event_intents');
    await until('every cut-off write has its intent and its item stored', async () => {
      const [withIntent, stored] = await Promise.all([
        intents.countDocuments({ 'changes.key': { $in: cutOff } }),
        items.countDocuments({ _id: { $in: cutOff as never[] } }),
      ]);
      return withIntent === WRITERS && stored === WRITERS;
    });
    expect(proxy.held()).toBeGreaterThan(0);

    await service.kill();
    const replies = await Promise.all(inFlight);
    for (const agent of agents) agent.destroy();
    expect(replies.filter((reply) => reply?.status === 200)).toEqual([]);

    // The crash left every intent behind: those of the acknowledged writes (whose deletions were
    // held, as were those of the user's and the collection's creation), and those of the cut-off
    // writes, which have no events.
    const leftIntents = await intents.countDocuments();
    const written = [...acknowledged, ...cutOff];
    expect(await intents.countDocuments({ 'changes.key': { $in: written } })).toBe(written.length);
    expect(await db.collection('events').countDocuments({ key: { $in: cutOff } })).toBe(0);

    service = await startService({ ...ENV, MONGODB_DB_NAME: dbName });
    // The reconciler takes intents once they are older than the grace period.
    await until('the restarted service reconciles every intent', async () => {
      return (await intents.countDocuments()) === 0;
    });

    const seen = new Set<string>();
    const twice: string[] = [];
    let after = '0';
    for (;;) {
      const page = JSON.parse(
        (await service.send('GET', `/events?after=${after}&limit=500&resource=item`, key)).body,
      ) as { events: { type: string; key: string }[]; next: string };
      if (page.events.length === 0) break;
      for (const event of page.events) {
        if (event.type !== 'created') continue;
        if (seen.has(event.key)) twice.push(event.key);
        seen.add(event.key);
      }
      after = page.next;
    }
    expect(acknowledged.filter((id) => !seen.has(id))).toEqual([]);
    // An intent whose events were in already is deleted, not recorded again.
    expect(twice).toEqual([]);
    // Every item the database holds has its event, the cut-off ones included.
    const stored = (await items.find().toArray()).map((doc) => String(doc._id));
    expect(stored).toHaveLength(WRITERS * (ROUNDS + 1));
    expect(stored.filter((id) => !seen.has(id))).toEqual([]);
    process.stdout.write(
      `feed after SIGKILL: ${acknowledged.length} acknowledged writes and ${cutOff.length} cut off after their item was stored, all in the feed; ${leftIntents} intents reconciled after the restart\n`,
    );
  } finally {
    await client.close();
  }
});
