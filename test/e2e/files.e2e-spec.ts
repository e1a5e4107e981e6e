import { createHash, randomBytes } from 'node:crypto';
import { createTestApp, type TestApp } from '../support/app';
import { createSubKey, createUser } from '../support/factories';
import { as } from '../support/http';
import type { Response } from 'superagent';

const sha256 = (bytes: Buffer) => createHash('sha256').update(bytes).digest('hex');

/** Binary bodies as supertest hands them over: a Buffer of the response bytes. */
function bytesParser(res: Response, done: (error: Error | null, body: Buffer) => void): void {
  const chunks: Buffer[] = [];
  const stream = res as unknown as NodeJS.ReadableStream;
  stream.on('data', (chunk: Buffer) => chunks.push(chunk));
  stream.on('end', () => done(null, Buffer.concat(chunks)));
}

/** Files: upload, read, ranges, conditional reads, ownership, links and deletion. */
describe('files', () => {
  let t: TestApp;

  beforeAll(async () => {
    t = await createTestApp(__filename, { FILE_QUOTA_BYTES: String(1024 * 1024) });
  });

  afterAll(async () => {
    await t?.close();
  });

  function upload(
    key: { apiKey: string },
    bytes: Buffer,
    name: string,
    type = 'application/octet-stream',
  ) {
    return t
      .http()
      .post('/files')
      .query({ name })
      .set('X-Api-Key', key.apiKey)
      .set('Content-Type', type)
      .send(bytes);
  }

  function download(
    key: { apiKey: string } | null,
    path: string,
    headers: Record<string, string> = {},
  ) {
    const req = t.http().get(path).set(headers).buffer(true).parse(bytesParser);
    return key ? req.set('X-Api-Key', key.apiKey) : req;
  }

  it('stores a raw upload and gives back the same bytes, its metadata and its ETag', async () => {
    const user = await createUser(t);
    const bytes = randomBytes(300_000);
    const res = await upload(user, bytes, 'blob.bin').expect(201);
    const got = await download(user, `/files/${res.body.id}/content`).expect(200);
    expect(Buffer.compare(got.body as Buffer, bytes)).toBe(0);
    expect(got.headers.etag).toBe(`"${sha256(bytes)}"`);
    await as(t, user).get(`/files/${res.body.id}`).expect(200, res.body);
    await download(user, `/files/${res.body.id}/content`, {
      'If-None-Match': got.headers.etag as string,
    }).expect(304);
  });

  it('answers first, middle, suffix and unsatisfiable ranges', async () => {
    const user = await createUser(t);
    const bytes = randomBytes(600_000);
    const { body: file } = await upload(user, bytes, 'r.bin').expect(201);
    const path = `/files/${file.id}/content`;
    const first = await download(user, path, { Range: 'bytes=0-99' }).expect(206);
    expect(Buffer.compare(first.body as Buffer, bytes.subarray(0, 100))).toBe(0);
    expect(first.headers['content-range']).toBe(`bytes 0-99/${bytes.length}`);
    const middle = await download(user, path, { Range: 'bytes=261000-300000' }).expect(206);
    expect(Buffer.compare(middle.body as Buffer, bytes.subarray(261_000, 300_001))).toBe(0);
    const suffix = await download(user, path, { Range: 'bytes=-1000' }).expect(206);
    expect(Buffer.compare(suffix.body as Buffer, bytes.subarray(bytes.length - 1000))).toBe(0);
    const none = await download(user, path, { Range: `bytes=${bytes.length}-` }).expect(416);
    expect(none.headers['content-range']).toBe(`bytes */${bytes.length}`);
  });

  it('takes a multipart upload with one file part', async () => {
    const user = await createUser(t);
    const bytes = Buffer.from('hello, multipart');
    const res = await t
      .http()
      .post('/files')
      .set('X-Api-Key', user.apiKey)
      .attach('file', bytes, { filename: 'hello.txt', contentType: 'text/plain' })
      .expect(201);
    expect(res.body).toMatchObject({
      name: 'hello.txt',
      contentType: 'text/plain',
      size: bytes.length,
    });
  });

  it('serves HTML as an attachment with nosniff, and names files per RFC 6266', async () => {
    const user = await createUser(t);
    const { body: file } = await upload(
      user,
      Buffer.from('<script>alert(1)</script>'),
      'página.html',
      'text/html',
    ).expect(201);
    const res = await download(user, `/files/${file.id}/content`).expect(200);
    expect(res.headers['x-content-type-options']).toBe('nosniff');
    expect(res.headers['content-disposition']).toBe(
      `attachment; filename="p?gina.html"; filename*=UTF-8''p%C3%A1gina.html`,
    );
  });

  it('keeps a sub key to its own files', async () => {
    const user = await createUser(t);
    const sub = await createSubKey(t, user);
    const other = await createSubKey(t, user, { clientId: 'other' });
    const { body: own } = await upload(sub, Buffer.from('mine'), 'mine.txt').expect(201);
    const { body: theirs } = await upload(other, Buffer.from('theirs'), 'theirs.txt').expect(201);
    const list = await as(t, sub).get('/files').expect(200);
    expect(list.body.map((f: { id: string }) => f.id)).toEqual([own.id]);
    await as(t, sub).get(`/files/${theirs.id}`).expect(404);
    await download(sub, `/files/${theirs.id}/content`).expect(404);
    await as(t, sub).delete(`/files/${theirs.id}`).expect(404);
    const all = await as(t, user).get('/files').expect(200);
    expect(all.body.map((f: { id: string }) => f.id)).toEqual([own.id, theirs.id]);
  });

  it('refuses an upload past the quota, and gives bytes back on delete', async () => {
    const user = await createUser(t);
    const big = randomBytes(700_000);
    const { body: file } = await upload(user, big, 'big.bin').expect(201);
    await upload(user, big, 'big2.bin').expect(409);
    const me = await as(t, user).get('/me').expect(200);
    expect(me.body.quota.files).toEqual({ used: big.length, limit: 1024 * 1024 });
    await as(t, user).delete(`/files/${file.id}`).expect(204);
    await upload(user, big, 'big2.bin').expect(201);
  });

  it('signs links that download without a key until they expire or the file is deleted', async () => {
    const user = await createUser(t);
    const bytes = Buffer.from('linked');
    const { body: file } = await upload(user, bytes, 'l.txt', 'text/plain').expect(201);
    const { body: link } = await as(t, user)
      .post(`/files/${file.id}/links`, { expiresInSeconds: 60 })
      .expect(201);
    const got = await download(null, link.path).expect(200);
    expect((got.body as Buffer).toString()).toBe('linked');
    await download(null, `${link.path.slice(0, -2)}xx`).expect(403);
    await as(t, user).delete(`/files/${file.id}`).expect(204);
    await download(null, link.path).expect(404);
  });

  it('refuses a multipart body with two file parts and stores neither', async () => {
    const user = await createUser(t);
    const res = await t
      .http()
      .post('/files')
      .set('X-Api-Key', user.apiKey)
      .attach('a', Buffer.from('first'), { filename: 'a.txt', contentType: 'text/plain' })
      .attach('b', Buffer.from('second'), { filename: 'b.txt', contentType: 'text/plain' })
      .expect(400);
    expect(res.body).toMatchObject({ code: 'VALIDATION_FAILED' });
    await as(t, user).get('/files').expect(200, []);
    const me = await as(t, user).get('/me').expect(200);
    expect(me.body.quota.files.used).toBe(0);
  });

  it('stops a signed link at its expiry', async () => {
    const user = await createUser(t);
    const { body: file } = await upload(user, Buffer.from('brief'), 'b.txt', 'text/plain').expect(
      201,
    );
    const { body: link } = await as(t, user)
      .post(`/files/${file.id}/links`, { expiresInSeconds: 1 })
      .expect(201);
    await download(null, link.path).expect(200);
    await new Promise((resolve) =>
      setTimeout(resolve, Date.parse(link.expiresAt) - Date.now() + 50),
    );
    const gone = await download(null, link.path).expect(410);
    expect(JSON.parse((gone.body as Buffer).toString())).toMatchObject({
      code: 'FILE_LINK_EXPIRED',
    });
  });

  it('refuses a link longer than FILE_LINK_MAX_SECONDS', async () => {
    const user = await createUser(t);
    const { body: file } = await upload(user, Buffer.from('x'), 'x.bin').expect(201);
    await as(t, user)
      .post(`/files/${file.id}/links`, { expiresInSeconds: t.config.files.linkMaxSeconds + 1 })
      .expect(400);
  });

  it('records uploads and deletions in the change feed, a sub key seeing only its own', async () => {
    const user = await createUser(t);
    const sub = await createSubKey(t, user);
    const { body: mine } = await upload(user, Buffer.from('root'), 'root.txt').expect(201);
    const { body: subs } = await upload(sub, Buffer.from('sub'), 'sub.txt').expect(201);
    await as(t, user).delete(`/files/${mine.id}`).expect(204);
    const feed = await as(t, user)
      .get('/events', { query: { resource: 'file' } })
      .expect(200);
    const events = (feed.body.events ?? feed.body) as {
      type: string;
      key: string;
      data: unknown;
    }[];
    expect(events.map((e) => [e.type, e.key])).toEqual([
      ['created', mine.id],
      ['created', subs.id],
      ['deleted', mine.id],
    ]);
    expect(events[0]?.data).toMatchObject({ id: mine.id, name: 'root.txt', size: 4 });
    const subFeed = await as(t, sub)
      .get('/events', { query: { resource: 'file' } })
      .expect(200);
    const seen = (subFeed.body.events ?? subFeed.body) as { key: string }[];
    expect(seen.map((e) => e.key)).toEqual([subs.id]);
  });

  it('names a raw upload sent without a name by its id', async () => {
    const user = await createUser(t);
    const res = await t
      .http()
      .post('/files')
      .set('X-Api-Key', user.apiKey)
      .set('Content-Type', 'application/octet-stream')
      .send(Buffer.from('nameless'))
      .expect(201);
    expect(res.body.name).toBe(res.body.id);
  });

  it('stores an empty raw body as an empty file', async () => {
    const user = await createUser(t);
    const res = await t
      .http()
      .post('/files')
      .query({ name: 'empty.txt' })
      .set('X-Api-Key', user.apiKey)
      .set('Content-Type', 'text/plain')
      .expect(201);
    expect(res.body).toMatchObject({ size: 0, sha256: sha256(Buffer.alloc(0)) });
    const got = await download(user, `/files/${res.body.id}/content`).expect(200);
    expect((got.body as Buffer).length).toBe(0);
    expect(got.headers['content-length']).toBe('0');
  });
});
