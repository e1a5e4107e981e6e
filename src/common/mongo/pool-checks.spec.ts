import { MongoClient } from 'mongodb';
import { checkPoolsEvery, POOL_CHECK_INTERVAL_MS } from './pool-checks';

/** The pool the client made for its one server (an address nothing listens on). */
async function poolIntervalOf(client: MongoClient): Promise<number> {
  const connecting = client.connect().catch(() => undefined);
  try {
    const topology = (client as unknown as { topology: { s: { servers: Map<string, unknown> } } })
      .topology;
    const [server] = [...topology.s.servers.values()] as {
      pool: { options: { minPoolSizeCheckFrequencyMS: number } };
    }[];
    if (!server) throw new Error('the client made no server');
    return server.pool.options.minPoolSizeCheckFrequencyMS;
  } finally {
    await client.close();
    await connecting;
  }
}

const unreachable = () =>
  new MongoClient('mongodb://127.0.0.1:9/', {
    serverSelectionTimeoutMS: 200,
    connectTimeoutMS: 200,
  });

describe('checkPoolsEvery', () => {
  it('gives every pool of the client the interval, where the driver would check every 100 ms', async () => {
    expect(await poolIntervalOf(unreachable())).toBe(100);
    expect(await poolIntervalOf(checkPoolsEvery(unreachable()))).toBe(POOL_CHECK_INTERVAL_MS);
    expect(await poolIntervalOf(checkPoolsEvery(unreachable(), 2500))).toBe(2500);
  });

  it('refuses a client that has connected: its pools would keep the interval they have', async () => {
    const client = unreachable();
    const connecting = client.connect().catch(() => undefined);
    try {
      expect(() => checkPoolsEvery(client)).toThrow(/before it connects/);
    } finally {
      await client.close();
      await connecting;
    }
  });
});
