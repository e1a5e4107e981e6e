import { createHash, randomBytes } from 'node:crypto';
import type { AddressInfo } from 'node:net';
import { ObjectId } from 'mongodb';
import type { Response } from 'superagent';
import { createTestApp, type TestApp } from '../support/app';
import { launchChromium } from '../support/console-browser';
import { createSubKey, createUser, type TestUser } from '../support/factories';
import { as } from '../support/http';
import { expectInvalid } from '../support/problems';

const sha256 = (bytes: Buffer) => createHash('sha256').update(bytes).digest('hex');

/** Binary bodies as supertest hands them over: a Buffer of the response bytes. */
function bytesParser(res: Response, done: (error: Error | null, body: Buffer) => void): void {
  const chunks: Buffer[] = [];
  const stream = res as unknown as NodeJS.ReadableStream;
  stream.on('data', (chunk: Buffer) => chunks.push(chunk));
  stream.on('end', () => done(null, Buffer.concat(chunks)));
}

/**
 * Content-Types an upload could send to make a browser take its bytes for a page, and what
 * becomes of each: refused (400), or stored as the one normalised type given and served as an
 * attachment. Browsers read the last type of a comma-separated list, so every comma is refused,
 * quoted or not.
 */
const HOSTILE_TYPES: [sent: string, stored: string | 400][] = [
  ['text/plain;,text/html', 400],
  ['image/png;,text/html', 400],
  ['video/mp4;,text/html', 400],
  ['text/plain; a=b,text/html', 400],
  ['image/gif;x=",",image/svg+xml', 400],
  ['application/pdf;,application/xhtml+xml', 400],
  ['text/plain, text/html', 400],
  ['text/plain,text/html', 400],
  ['image/png;,text/html;,image/png', 400],
  ['text/plain;x="a,b"', 400],
  ['image/png; a="\\",text/html"', 400],
  ['text/plain;;,text/html', 400],
  ['text/plain; charset=utf-8; text/html', 400],
  ['text/plain;\t,text/html', 400],
  ['text/plain\t;,text/html', 400],
  ['audio/mpeg ;,text/html', 400],
  ['text/plain/html', 400],
  ['text/html', 'text/html'],
  ['TEXT/HTML', 'text/html'],
  ['text/html; charset=utf-8', 'text/html; charset=utf-8'],
  ['Text/Html ;Charset="UTF-8"', 'text/html; charset=UTF-8'],
  ['text/html;x=text/plain', 400],
  ['text/html;x="text/plain"', 'text/html; x="text/plain"'],
  ['application/xhtml+xml', 'application/xhtml+xml'],
  ['image/svg+xml', 'image/svg+xml'],
  ['IMAGE/SVG+XML; charset=utf-8', 'image/svg+xml; charset=utf-8'],
  ['text/xml', 'text/xml'],
  ['application/xml', 'application/xml'],
  ['text/xsl', 'text/xsl'],
  ['application/rss+xml', 'application/rss+xml'],
  ['multipart/x-mixed-replace; boundary=b', 'multipart/x-mixed-replace; boundary=b'],
  ['multipart/mixed; boundary=b', 'multipart/mixed; boundary=b'],
  ['message/rfc822', 'message/rfc822'],
  ['video/x-page+xml', 'video/x-page+xml'],
  ['audio/x-page+xml; charset=utf-8', 'audio/x-page+xml; charset=utf-8'],
  ['text/javascript', 'text/javascript'],
  ['application/x-unknown', 'application/x-unknown'],
];

/** Plain text whose parameters name another type: served inline, and read as plain text. */
const PLAIN_LOOKALIKES: [sent: string, stored: string][] = [
  ['text/plain; x="text/html"', 'text/plain; x="text/html"'],
  ['text/plain;charset="text/html"', 'text/plain; charset="text/html"'],
];

/** Markup a browser would show as a page if it took the bytes for HTML, SVG or XML. */
const MARKUP = Buffer.from(
  '<html xmlns="http://www.w3.org/1999/xhtml"><body><h1 id="uploaded">Sign in again</h1></body></html>',
);

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

  /** The download headers that decide how a browser treats the bytes, by key and by link. */
  async function served(user: TestUser, id: string): Promise<Record<string, string>[]> {
    const { body: link } = await as(t, user)
      .post(`/files/${id}/links`, { expiresInSeconds: 600 })
      .expect(201);
    const answers = [
      await download(user, `/files/${id}/content`).expect(200),
      await download(null, link.path as string).expect(200),
    ];
    return answers.map((res) => ({
      type: res.headers['content-type'] as string,
      disposition: (res.headers['content-disposition'] as string).split(';')[0] as string,
      nosniff: res.headers['x-content-type-options'] as string,
      csp: res.headers['content-security-policy'] as string,
    }));
  }

  const ATTACHMENT = {
    disposition: 'attachment',
    nosniff: 'nosniff',
    csp: "default-src 'none'; sandbox",
  };

  it('refuses a Content-Type that is a list or hides a second type, and serves every other hostile type normalised, as an attachment', async () => {
    const user = await createUser(t);
    for (const [sent, stored] of HOSTILE_TYPES) {
      const res = await upload(user, MARKUP, 'page.html', sent);
      if (stored === 400) {
        expect({ sent, status: res.status }).toEqual({ sent, status: 400 });
        expectInvalid(res, 'Content-Type');
        continue;
      }
      expect({ sent, status: res.status, type: res.body.contentType }).toEqual({
        sent,
        status: 201,
        type: stored,
      });
      const expected = { ...ATTACHMENT, type: stored };
      expect({ sent, answers: await served(user, res.body.id as string) }).toEqual({
        sent,
        answers: [expected, expected],
      });
    }
    // A multipart part's type is read by the same rules; one the parser cannot read is its
    // default, text/plain.
    for (const [partType, stored] of [
      ['text/html; charset=utf-8', 'text/html'],
      ['text/plain;,text/html', 'text/plain'],
      ['image/svg+xml', 'image/svg+xml'],
    ] as const) {
      const res = await t
        .http()
        .post('/files')
        .set('X-Api-Key', user.apiKey)
        .attach('file', MARKUP, { filename: 'page.html', contentType: partType })
        .expect(201);
      expect({ partType, type: res.body.contentType }).toEqual({ partType, type: stored });
      const disposition = stored === 'text/plain' ? 'inline' : 'attachment';
      for (const answer of await served(user, res.body.id as string))
        expect({ partType, answer }).toEqual({
          partType,
          answer: { ...ATTACHMENT, disposition, type: stored },
        });
    }
    const files = (
      await as(t, user)
        .get('/files', { query: { limit: '500' } })
        .expect(200)
    ).body as { contentType: string }[];
    expect(files.filter((f) => f.contentType.includes(','))).toEqual([]);
  });

  it('serves inline only the normalised types of its short list', async () => {
    const user = await createUser(t);
    for (const [sent, type, disposition] of [
      ['image/png', 'image/png', 'inline'],
      ['IMAGE/PNG', 'image/png', 'inline'],
      ['image/jpeg', 'image/jpeg', 'inline'],
      ['image/webp', 'image/webp', 'inline'],
      ['application/pdf', 'application/pdf', 'inline'],
      ['text/plain;charset=utf-8', 'text/plain; charset=utf-8', 'inline'],
      ['audio/mpeg', 'audio/mpeg', 'inline'],
      ['video/mp4; codecs="avc1.42E01E"', 'video/mp4; codecs=avc1.42E01E', 'inline'],
      ['image/x-icon', 'image/x-icon', 'attachment'],
      ['text/csv', 'text/csv', 'attachment'],
      ['application/json', 'application/json', 'attachment'],
      ...PLAIN_LOOKALIKES.map(([sent, type]) => [sent, type, 'inline'] as const),
    ] as const) {
      const res = await upload(user, Buffer.from('bytes'), 'f', sent).expect(201);
      expect({ sent, type: res.body.contentType }).toEqual({ sent, type });
      const expected = { ...ATTACHMENT, disposition, type };
      expect({ sent, answers: await served(user, res.body.id as string) }).toEqual({
        sent,
        answers: [expected, expected],
      });
    }
  });

  it('serves a file whose stored type is not one valid media type as application/octet-stream, an attachment', async () => {
    const user = await createUser(t);
    for (const [sent] of HOSTILE_TYPES.filter(([, stored]) => stored === 400)) {
      const { body: file } = await upload(user, MARKUP, 'page.html').expect(201);
      // Stored so before uploads were checked.
      await t.connection
        .collection('file_records')
        .updateOne({ _id: new ObjectId(file.id as string) }, { $set: { contentType: sent } });
      const expected = { ...ATTACHMENT, type: 'application/octet-stream' };
      expect({ sent, answers: await served(user, file.id as string) }).toEqual({
        sent,
        answers: [expected, expected],
      });
    }
  });

  it('lets Chromium render no hostile upload as a document, by key or by link', async () => {
    const user = await createUser(t);
    await t.app.listen(0, '127.0.0.1');
    const { port } = t.app.getHttpServer().address() as AddressInfo;
    const base = `http://127.0.0.1:${port}`;
    const paths: [string, string][] = [];
    for (const [sent] of HOSTILE_TYPES) {
      let res = await upload(user, MARKUP, 'page.html', sent);
      if (res.status === 400) {
        // A type refused today, stored before uploads were checked.
        res = await upload(user, MARKUP, 'page.html').expect(201);
        await t.connection
          .collection('file_records')
          .updateOne({ _id: new ObjectId(res.body.id as string) }, { $set: { contentType: sent } });
      }
      const { body: link } = await as(t, user)
        .post(`/files/${res.body.id}/links`, { expiresInSeconds: 600 })
        .expect(201);
      paths.push([sent, `/files/${res.body.id}/content`], [sent, link.path as string]);
    }
    // The detector's own check: a plain text file is a document, but not the markup's.
    const { body: plain } = await upload(user, MARKUP, 'plain.txt', 'text/plain').expect(201);
    const control = `/files/${plain.id}/content`;

    const browser = await launchChromium();
    try {
      const context = await browser.newContext({ extraHTTPHeaders: { 'X-Api-Key': user.apiKey } });
      const page = await context.newPage();
      /** 'download', or the document the browser made of the answer. */
      const outcome = async (path: string): Promise<string> => {
        const url = `${base}${path}`;
        const downloaded = page
          .waitForEvent('download', { predicate: (d) => d.url() === url, timeout: 10_000 })
          .then(
            async (d) => {
              await d.cancel();
              return true;
            },
            () => false,
          );
        const committed = await page.goto(url).then(
          () => true,
          () => false,
        );
        if (!committed) return (await downloaded) ? 'download' : 'nothing';
        const type = await page.evaluate<string>('document.contentType');
        const rendered = await page.evaluate<boolean>('!!document.getElementById("uploaded")');
        return `document ${type}${rendered ? ' with the uploaded markup' : ''}`;
      };
      expect(await outcome(control)).toBe('document text/plain');
      const outcomes = [];
      for (const [sent, path] of paths) outcomes.push({ sent, path, got: await outcome(path) });
      expect(outcomes.filter((o) => o.got !== 'download')).toEqual([]);
      for (const [sent] of PLAIN_LOOKALIKES) {
        const { body: file } = await upload(user, MARKUP, 'page.html', sent).expect(201);
        const got = await outcome(`/files/${file.id}/content`);
        expect({ sent, got }).toEqual({ sent, got: 'document text/plain' });
      }
    } finally {
      await browser.close();
    }
  }, 120_000); // A browser start and some eighty page loads: over a minute on 2 loaded cores.

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

  it('refuses a list filter over 255 characters, naming it alone', async () => {
    const user = await createUser(t);
    for (const field of ['name', 'contentType']) {
      const res = await as(t, user).get('/files', { query: { [field]: 'a'.repeat(256) } });
      expectInvalid(res, field);
      expect(res.body.errors).toEqual([{ field, message: 'must be at most 255 characters' }]);
    }
    // The page's own parameters are answered first; both filters wrong: the first one named.
    const both = { name: 'a'.repeat(256), contentType: 'b'.repeat(256) };
    const wrongLimit = await as(t, user).get('/files', { query: { ...both, limit: '0' } });
    expect(wrongLimit.body.errors).toEqual([expect.objectContaining({ field: 'limit' })]);
    const wrongBoth = await as(t, user).get('/files', { query: both });
    expect(wrongBoth.body.errors).toEqual([expect.objectContaining({ field: 'name' })]);
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

  it('refuses a multipart body without its closing boundary (400) and stores nothing', async () => {
    const user = await createUser(t);
    const part =
      '--cut\r\nContent-Disposition: form-data; name="file"; filename="cut.txt"\r\n' +
      'Content-Type: text/plain\r\n\r\n';
    for (const body of [
      `${part}the bytes, and no boundary after them`,
      `${part}the bytes, and a boundary that does not close\r\n--cut`,
      `${part}the bytes\r\n--cut\r\nContent-Disposition: form-data; name="note"\r\n\r\nno end`,
      '--cut\r\nContent-Disposition: form-data; name="file"; filena',
    ]) {
      const res = await t
        .http()
        .post('/files')
        .set('X-Api-Key', user.apiKey)
        .set('Content-Type', 'multipart/form-data; boundary=cut')
        .send(body);
      expect({ body, status: res.status }).toEqual({ body, status: 400 });
      expectInvalid(res, 'body');
    }
    await as(t, user).get('/files').expect(200, []);
    const me = await as(t, user).get('/me').expect(200);
    expect(me.body.quota.files.used).toBe(0);
    expect(
      await t.connection.collection('file_records').countDocuments({ tenant: user.subject }),
    ).toBe(0);
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
