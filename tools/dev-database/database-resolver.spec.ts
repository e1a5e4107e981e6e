import { mkdtemp, readdir, rm } from 'node:fs/promises';
import { createServer, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  DatabaseUnavailableError,
  resolveDatabase,
  type DatabaseResolutionOptions,
} from './database-resolver';
import { findFreePort } from './ports';

function listen(port: number, host = '127.0.0.1'): Promise<Server> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen({ port, host, exclusive: true }, () => resolve(server));
  });
}

function close(server: Server): Promise<void> {
  return new Promise((resolve, reject) =>
    server.close((error) => (error ? reject(error) : resolve())),
  );
}

describe('resolveDatabase', () => {
  let root: string;
  let messages: string[];
  let options: DatabaseResolutionOptions;

  beforeEach(async () => {
    root = await mkdtemp(join(tmpdir(), 'database-resolver-'));
    messages = [];
    options = {
      dataDir: join(root, 'data'),
      cacheDir: join(root, 'cache'),
      ferretdbVersion: 'v1.24.2',
      embedded: 'auto',
      log: (message) => messages.push(message),
    };
  });

  afterEach(async () => {
    await rm(root, { recursive: true, force: true });
  });

  it('uses MONGODB_URI as is and starts nothing', async () => {
    const database = await resolveDatabase({ ...options, uri: 'mongodb://db.example:27017/' });

    expect(database.kind).toBe('external');
    expect(database.uri).toBe('mongodb://db.example:27017/');
    expect(database.description).toContain('db.example:27017');
    expect(messages).toEqual(['database: MONGODB_URI is set, using it']);
    // Nothing was started, so nothing was created under the data or cache directories.
    expect(await readdir(root)).toEqual([]);
    await expect(database.stop()).resolves.toBeUndefined();
    await expect(database.stop()).resolves.toBeUndefined();
  });

  it('keeps a password in MONGODB_URI out of the description', async () => {
    const database = await resolveDatabase({
      ...options,
      uri: 'mongodb://app:s3cret@db.example:27017/',
    });

    expect(database.uri).toBe('mongodb://app:s3cret@db.example:27017/');
    expect(database.description).not.toContain('s3cret');
  });

  it('explains what to set when FERRETDB_BIN is not a binary', async () => {
    const bin = join(root, 'missing-ferretdb');
    const failure = resolveDatabase({ ...options, embedded: 'ferretdb', ferretdbBin: bin });

    await expect(failure).rejects.toThrow(DatabaseUnavailableError);
    await expect(failure).rejects.toThrow(`FERRETDB_BIN=${bin} is not an executable file`);
    await expect(failure).rejects.toThrow('MONGODB_URI=');
    expect(messages).toContain('database: EMBEDDED_DB=ferretdb, using FerretDB');
  });

  it('reports a fixed port that is already taken', async () => {
    const port = await findFreePort();
    const blocker = await listen(port);
    try {
      await expect(
        resolveDatabase({ ...options, embedded: 'ferretdb', ferretdbBin: join(root, 'x'), port }),
      ).rejects.toThrow(`port 127.0.0.1:${port} is already in use`);
    } finally {
      await close(blocker);
    }
  });
});

describe('DatabaseUnavailableError', () => {
  it('names every way to provide a database', () => {
    const error = new DatabaseUnavailableError();

    expect(error).toBeInstanceOf(Error);
    expect(error.name).toBe('DatabaseUnavailableError');
    expect(error.message).toContain('MONGODB_URI=mongodb://host:27017/');
    expect(error.message).toContain('https://go.dev/dl');
    expect(error.message).toContain('FERRETDB_BIN=/path/to/ferretdb');
  });

  it('lists what was tried', () => {
    const error = new DatabaseUnavailableError([
      'mongodb-memory-server: download failed: getaddrinfo ENOTFOUND fastdl.mongodb.org',
      'FerretDB: go not found on PATH, cannot build FerretDB',
    ]);

    expect(error.attempts).toHaveLength(2);
    expect(error.message).toContain('  - mongodb-memory-server: download failed');
    expect(error.message).toContain('  - FerretDB: go not found on PATH');
  });
});

describe('findFreePort', () => {
  it('returns a loopback port that can be bound', async () => {
    const port = await findFreePort();

    expect(port).toBeGreaterThan(0);
    expect(port).toBeLessThan(65536);
    await close(await listen(port));
  });
});
