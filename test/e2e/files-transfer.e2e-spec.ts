import { createHash, createHmac, randomBytes } from 'node:crypto';
import { ObjectId } from 'mongodb';
import type { Response } from 'superagent';
import { createTestApp, everyDatabase, type TestApp } from '../support/app';
import { createSubKey, createUser, type TestUser } from '../support/factories';
import { as } from '../support/http';
import { digestOf, exportAs, importAs, resultsOf, type Line } from '../support/ndjson';

const CHUNK = 192 * 1024;
const QUOTA = 4 * 1024 * 1024;
const sha256 = (bytes: Buffer) => createHash('sha256').update(bytes).digest('hex');
const freshId = () => randomBytes(12).toString('hex');

function bytesParser(res: Response, done: (error: Error | null, body: Buffer) => void): void {
  const chunks: Buffer[] = [];
  const stream = res as unknown as NodeJS.ReadableStream;
  stream.on('data', (chunk: Buffer) => chunks.push(chunk));
  stream.on('end', () => done(null, Buffer.concat(chunks)));
}

/** A file's lines as an export writes them. */
function fileLines(id: string, bytes: Buffer, file: Partial<Line> = {}): Line[] {
  const lines: Line[] = [
    {
      type: 'file',
      file: {
        id,
        name: 'restored.bin',
        contentType: 'application/octet-stream',
        size: bytes.length,
        sha256: sha256(bytes),
        createdAt: '2025-03-04T05:06:07.089Z',
        owner: 'someone',
        ...file,
      },
    },
  ];
  for (let n = 0; n * CHUNK < bytes.length; n += 1)
    lines.push({
      type: 'file-chunk',
      id,
      n,
      data: bytes.subarray(n * CHUNK, (n + 1) * CHUNK).toString('base64'),
    });
  return lines;
}

/** Export and import of a namespace's files. */
describe('files in export and import', () => {
  let t: TestApp;

  beforeAll(async () => {
    t = await createTestApp(__filename, { FILE_QUOTA_BYTES: String(QUOTA) });
  });

  afterAll(async () => {
    await t?.close();
  });

  function upload(key: { apiKey: string }, bytes: Buffer, name: string, type: string) {
    // An empty file goes as a multipart part (a raw upload needs a body).
    if (bytes.length === 0)
      return t
        .http()
        .post('/files')
        .set('X-Api-Key', key.apiKey)
        .attach('file', bytes, { filename: name, contentType: type });
    return t
      .http()
      .post('/files')
      .query({ name })
      .set('X-Api-Key', key.apiKey)
      .set('Content-Type', type)
      .send(bytes);
  }

  async function download(key: { apiKey: string }, id: string): Promise<Buffer> {
    const res = await t
      .http()
      .get(`/files/${id}/content`)
      .set('X-Api-Key', key.apiKey)
      .buffer(true)
      .parse(bytesParser)
      .expect(200);
    return res.body as Buffer;
  }

  async function used(user: TestUser): Promise<number> {
    const me = await as(t, user).get('/me').expect(200);
    return (me.body as { quota: { files: { used: number } } }).quota.files.used;
  }

  /** What is left of a file anywhere: its record and its GridFS chunks and file document. */
  async function leftOf(id: string): Promise<number> {
    let left = await t.connection
      .collection('file_records')
      .countDocuments({ _id: new ObjectId(id) });
    for (const db of await everyDatabase(t)) {
      left += await db.collection('files.chunks').countDocuments({ files_id: new ObjectId(id) });
      left += await db.collection('files.files').countDocuments({ _id: new ObjectId(id) });
    }
    return left;
  }

  async function seeded(): Promise<{ user: TestUser; files: { id: string; bytes: Buffer }[] }> {
    const user = await createUser(t);
    await as(t, user)
      .post('/data/notes', { item: { _id: 'n1', text: 'with files' } })
      .expect(200);
    const files: { id: string; bytes: Buffer }[] = [];
    for (const [bytes, name, type] of [
      [randomBytes(450_000), 'big.bin', 'application/octet-stream'],
      [Buffer.alloc(0), 'empty.txt', 'text/plain'],
      [Buffer.from('héllo'), 'hello.txt', 'text/plain; charset=utf-8'],
    ] as const) {
      const { body } = await upload(user, bytes, name, type).expect(201);
      files.push({ id: body.id as string, bytes });
    }
    return { user, files };
  }

  it('exports the files after the items, and restores them byte for byte under their ids', async () => {
    const { user: source, files } = await seeded();
    const exported = await exportAs(t, source);
    const [manifest, ...rest] = exported.lines;
    expect(manifest?.files).toEqual({ count: 3, bytes: 450_000 + 6 });
    expect(rest.map((line) => line.type)).toEqual([
      'item',
      'file',
      'file-chunk',
      'file-chunk',
      'file-chunk',
      'file',
      'file',
      'file-chunk',
      'end',
    ]);
    const texts = exported.text.split('\n').slice(1, -2);
    expect(rest.at(-1)).toEqual({ type: 'end', items: 8, files: 3, sha256: digestOf(texts) });
    expect(Math.max(...texts.map((text) => Buffer.byteLength(text)))).toBeLessThan(270_000);
    const listed = (await as(t, source).get('/files').expect(200)).body as Line[];

    // Another namespace takes them under the same ids, while the source keeps its files:
    // same ids, names, types, times and owners.
    const target = await createUser(t);
    const imported = await importAs(t, target, exported.text);
    const { results, totals } = resultsOf(imported);
    expect(results.map((r) => r.status)).toEqual([
      200, 201, 202, 202, 202, 201, 201, 202, 201, 200,
    ]);
    expect(totals).toMatchObject({ outcome: 'complete', created: 4, failed: 0 });
    expect(totals.incompleteFiles).toBeUndefined();
    // (The empty file's bytes: its record says 0 and the empty SHA-256, compared below.)
    for (const { id, bytes } of files.filter((file) => file.bytes.length > 0))
      expect(Buffer.compare(await download(target, id), bytes)).toBe(0);
    expect((await as(t, target).get('/files').expect(200)).body).toEqual(listed);
    for (const { id, bytes } of files.filter((file) => file.bytes.length > 0))
      expect(Buffer.compare(await download(source, id), bytes)).toBe(0);
    // Into the same namespace, the ids are taken: insert refuses, upsert replaces.
    const repeated = resultsOf(await importAs(t, source, exported.text));
    expect(repeated.results[2]).toMatchObject({ status: 409, code: 'FILE_EXISTS' });
    expect(await used(target)).toBe(450_006);
    const again = await exportAs(t, target);
    expect(again.lines.slice(1)).toEqual(exported.lines.slice(1));
  });

  it('resumes after a file, and leaves files out of a part of the collections unless asked', async () => {
    const { user, files } = await seeded();
    const full = await exportAs(t, user);
    const [big, empty] = files.map((file) => file.id) as [string, string];
    const resumed = await exportAs(t, user, { after: `~files/${big}` });
    expect(resumed.lines[0]).toMatchObject({ after: `~files/${big}` });
    const fromEmpty = full.lines.findIndex((l) => (l.file as Line | undefined)?.id === empty);
    expect(resumed.lines.slice(1, -1)).toEqual(full.lines.slice(fromEmpty, -1));
    expect(resumed.lines.at(-1)).toMatchObject({ type: 'end', items: 3, files: 2 });
    const afterItems = await exportAs(t, user, { after: 'notes/n1' });
    expect(afterItems.lines.slice(1)).toEqual(
      full.lines
        .slice(2, -1)
        .concat([{ ...full.lines.at(-1), items: 7, sha256: expect.any(String) }]),
    );
    expect((await exportAs(t, user, { after: '~files/nope' })).status).toBe(400);

    const part = await exportAs(t, user, { collections: 'notes' });
    expect(part.lines.map((l) => l.type)).toEqual(['manifest', 'item', 'end']);
    expect(part.lines[0]?.files).toBeUndefined();
    expect(part.lines.at(-1)?.files).toBeUndefined();
    const withFiles = await exportAs(t, user, { collections: 'notes', files: 'true' });
    expect(withFiles.lines.filter((l) => l.type === 'file')).toHaveLength(3);
    const none = await exportAs(t, user, { files: 'false' });
    expect(none.lines.map((l) => l.type)).toEqual(['manifest', 'item', 'end']);
  });

  it('gives a sub key its own files only, and makes the files it imports its own', async () => {
    const user = await createUser(t);
    const sub = await createSubKey(t, user);
    await upload(user, Buffer.from('root'), 'root.txt', 'text/plain').expect(201);
    const { body: own } = await upload(sub, Buffer.from('mine'), 'mine.txt', 'text/plain').expect(
      201,
    );
    const res = await exportAs(t, sub);
    expect(res.lines[0]?.files).toEqual({ count: 1, bytes: 4 });
    expect(res.lines.filter((l) => l.type === 'file').map((l) => (l.file as Line).id)).toEqual([
      own.id,
    ]);
    const id = freshId();
    const { results } = resultsOf(await importAs(t, sub, fileLines(id, Buffer.from('new'))));
    expect(results.map((r) => r.status)).toEqual([202, 201]);
    const stored = await as(t, sub).get(`/files/${id}`).expect(200);
    expect(stored.body).toMatchObject({
      owner: sub.accountId,
      createdAt: '2025-03-04T05:06:07.089Z',
    });
  });

  it('stores nothing of a damaged, cut or oversized file, and takes it again once whole', async () => {
    const user = await createUser(t);
    const bytes = randomBytes(500_000);
    const damaged = freshId();
    const lines = fileLines(damaged, bytes);
    const flipped = Buffer.from(bytes.subarray(CHUNK, 2 * CHUNK));
    flipped[7] = (flipped[7] as number) ^ 0xff;
    lines[2] = { ...lines[2], data: flipped.toString('base64') };
    const unreadable = freshId();
    const bad = fileLines(unreadable, bytes);
    bad[2] = { ...bad[2], data: '*not base64*' };
    const big = freshId();
    const cut = freshId();
    const body = [
      ...lines,
      ...bad,
      ...fileLines(big, Buffer.alloc(1), { size: QUOTA + 1 }).slice(0, 1),
      { type: 'file-chunk', id: big, n: 0, data: 'AA==' },
      ...fileLines(cut, bytes).slice(0, 2),
    ];
    const { results, totals } = resultsOf(await importAs(t, user, body));
    expect(results.map((r) => [r.status, r.code])).toEqual([
      [202, undefined],
      [202, undefined],
      [202, undefined],
      [400, 'DIGEST_MISMATCH'],
      [202, undefined],
      [202, undefined],
      [400, 'VALIDATION_FAILED'],
      [424, 'FILE_NOT_IMPORTED'],
      [409, 'FILE_QUOTA_EXCEEDED'],
      [424, 'FILE_NOT_IMPORTED'],
      [202, undefined],
      [202, undefined],
    ]);
    // The unreadable file (a refused line came before its last byte) and the cut one.
    expect(totals).toMatchObject({ outcome: 'complete', created: 0, incompleteFiles: 2 });
    for (const id of [damaged, unreadable, big, cut]) {
      expect(await leftOf(id)).toBe(0);
      await as(t, user).get(`/files/${id}`).expect(404);
    }
    expect(await used(user)).toBe(0);

    const retried = resultsOf(await importAs(t, user, fileLines(damaged, bytes)));
    expect(retried.results.at(-1)).toMatchObject({ status: 201, _id: damaged });
    expect(Buffer.compare(await download(user, damaged), bytes)).toBe(0);
    expect(await used(user)).toBe(bytes.length);
  });

  /** A signed link to the file, and what it answers without a key: status and bytes. */
  async function linkTo(key: { apiKey: string }, id: string): Promise<string> {
    const res = await as(t, key).post(`/files/${id}/links`, { expiresInSeconds: 600 }).expect(201);
    return (res.body as { path: string }).path;
  }

  async function follow(path: string): Promise<{ status: number; bytes: Buffer }> {
    const res = await t.http().get(path).buffer(true).parse(bytesParser);
    return { status: res.status, bytes: res.body as Buffer };
  }

  it('resolves a link only to the stored file it was made for, never to a file imported later under its id', async () => {
    const user = await createUser(t);
    const first = await createSubKey(t, user, { clientId: 'first' });
    const second = await createSubKey(t, user, { clientId: 'second' });
    const id = freshId();
    const original = Buffer.from('the file the link was made for');
    expect(resultsOf(await importAs(t, first, fileLines(id, original))).results).toHaveLength(2);
    const link = await linkTo(first, id);
    expect(await follow(link)).toEqual({ status: 200, bytes: original });
    await as(t, first).delete(`/files/${id}`).expect(204);
    expect((await follow(link)).status).toBe(404);

    // The same owner imports a file under the freed id: the link stays revoked.
    const again = Buffer.from('imported again by the same owner');
    expect(resultsOf(await importAs(t, first, fileLines(id, again))).results.at(-1)).toMatchObject({
      status: 201,
    });
    expect(Buffer.compare(await download(first, id), again)).toBe(0);
    expect((await follow(link)).status).toBe(404);
    const relinked = await linkTo(first, id);
    expect(await follow(relinked)).toEqual({ status: 200, bytes: again });
    await as(t, first).delete(`/files/${id}`).expect(204);

    // Another owner of the namespace imports its own file under it: neither link reaches it.
    const theirs = Buffer.from('another owner’s file');
    expect(
      resultsOf(await importAs(t, second, fileLines(id, theirs))).results.at(-1),
    ).toMatchObject({ status: 201 });
    expect(Buffer.compare(await download(second, id), theirs)).toBe(0);
    for (const path of [link, relinked]) {
      const res = await follow(path);
      expect(res.status).toBe(404);
      expect(res.bytes.toString()).not.toContain('another owner');
    }
  });

  it('stops a link when an upsert import replaces its file', async () => {
    const user = await createUser(t);
    const id = freshId();
    const first = Buffer.from('before the upsert');
    resultsOf(await importAs(t, user, fileLines(id, first)));
    const link = await linkTo(user, id);
    expect(await follow(link)).toEqual({ status: 200, bytes: first });
    const upsert = resultsOf(
      await importAs(t, user, fileLines(id, Buffer.from('after the upsert')), { mode: 'upsert' }),
    );
    expect(upsert.totals).toMatchObject({ replaced: 1 });
    expect((await follow(link)).status).toBe(404);
  });

  it('refuses a link in the form made before links named the stored file', async () => {
    const user = await createUser(t);
    const { body: file } = await upload(user, Buffer.from('old link'), 'old.txt', 'text/plain');
    // Signed with the deployment's key as links were: namespace, file id and expiry only.
    await linkTo(user, file.id as string);
    const secret = await t.connection
      .collection<{ _id: string; key: string }>('service_secrets')
      .findOne({ _id: 'file-links' });
    const payload = Buffer.from(
      JSON.stringify({
        v: 1,
        k: 'user',
        t: user.subject,
        b: '',
        f: file.id,
        e: Math.floor(Date.now() / 1000) + 600,
      }),
    ).toString('base64url');
    const signature = createHmac('sha256', Buffer.from(secret?.key ?? '', 'base64'))
      .update(payload)
      .digest('base64url');
    const res = await follow(`/file-links/${payload}.${signature}`);
    expect(res.status).toBe(403);
    expect(JSON.parse(res.bytes.toString())).toMatchObject({ code: 'FILE_LINK_INVALID' });
  });

  it('refuses a file id that exists in insert mode, replaces the file in upsert mode, and a dry run writes nothing', async () => {
    const user = await createUser(t);
    const id = freshId();
    const first = Buffer.from('first version');
    expect(resultsOf(await importAs(t, user, fileLines(id, first))).results.at(-1)).toMatchObject({
      status: 201,
    });
    const second = randomBytes(300_000);
    const replacing = fileLines(id, second, { name: 'second.bin' });
    const dup = resultsOf(await importAs(t, user, replacing));
    expect(dup.results.map((r) => r.status)).toEqual([409, 424, 424]);
    expect(dup.results[0]).toMatchObject({ code: 'FILE_EXISTS' });

    const dry = resultsOf(await importAs(t, user, replacing, { mode: 'upsert', dryRun: 'true' }));
    expect(dry.results.map((r) => r.status)).toEqual([202, 202, 200]);
    expect(dry.totals).toMatchObject({ dryRun: true, replaced: 1 });
    const fresh = freshId();
    const dryNew = resultsOf(await importAs(t, user, fileLines(fresh, second), { dryRun: 'true' }));
    expect(dryNew.results.map((r) => r.status)).toEqual([202, 202, 201]);
    expect(await leftOf(fresh)).toBe(0);
    expect(Buffer.compare(await download(user, id), first)).toBe(0);
    expect(await used(user)).toBe(first.length);

    const upsert = resultsOf(await importAs(t, user, replacing, { mode: 'upsert' }));
    expect(upsert.results.map((r) => r.status)).toEqual([202, 202, 200]);
    expect(upsert.totals).toMatchObject({ replaced: 1, created: 0 });
    expect(Buffer.compare(await download(user, id), second)).toBe(0);
    expect((await as(t, user).get(`/files/${id}`).expect(200)).body.name).toBe('second.bin');
    expect(await used(user)).toBe(second.length);

    // The feed says what became of the file: created, then (the upsert) deleted and created.
    const events = (await as(t, user).get('/events').expect(200)).body.events as Line[];
    expect(
      events
        .filter((e) => e.resource === 'file')
        .map((e) => [e.type, e.key, (e.data as Line)?.name]),
    ).toEqual([
      ['created', id, 'restored.bin'],
      ['deleted', id, undefined],
      ['created', id, 'second.bin'],
    ]);
  });
});
