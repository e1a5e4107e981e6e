// Files through the typed client: uploads from a Blob, bytes, a Node Readable and a web stream,
// the list, whole, ranged and conditional downloads, a signed link, a retried upload under one
// Idempotency-Key, the quota in GET /me, a sub key that sees only its own files, and a delete.
import assert from 'node:assert/strict';
import { createHash, randomBytes } from 'node:crypto';
import { Readable } from 'node:stream';
import {
  ApiProblemError,
  createApiClient,
  createFileLink,
  downloadFile,
  downloadFileLink,
  pageCursors,
  uploadFile,
  unwrap,
  type FileRequestOptions,
} from '../src';
import { expectProblem, newUser, unique, type Target } from './support';

const sha256 = (bytes: Uint8Array): string => createHash('sha256').update(bytes).digest('hex');

/** That `call` fails with an ApiProblemError of this status and code. */
async function rejectsWith(call: Promise<unknown>, status: number, code: string): Promise<void> {
  await assert.rejects(call, (error: unknown) => {
    assert.ok(error instanceof ApiProblemError);
    assert.equal(error.status, status);
    assert.equal(error.problem?.code, code);
    return true;
  });
}

async function bytesOf(response: Response): Promise<Buffer> {
  return Buffer.from(await response.arrayBuffer());
}

/** Pieces of `bytes`, given one at a time as a stream gives them. */
function pieces(bytes: Buffer, size: number): Buffer[] {
  const out: Buffer[] = [];
  for (let at = 0; at < bytes.length; at += size) out.push(bytes.subarray(at, at + size));
  return out;
}

export async function filesFlow(target: Target): Promise<void> {
  const { api, apiKey } = await newUser(target);
  const options: FileRequestOptions = { baseUrl: target.baseUrl, apiKey };
  const text = 'hello, files\n';

  const note = await uploadFile(options, new Blob([text], { type: 'text/plain' }), {
    name: 'note.txt',
  });
  assert.equal(note.name, 'note.txt');
  assert.equal(note.contentType, 'text/plain');
  assert.equal(note.size, Buffer.byteLength(text));
  assert.equal(note.sha256, sha256(Buffer.from(text)));

  // 600 KiB: more than two GridFS chunks, so a range crosses a chunk's end.
  const data = randomBytes(600 * 1024);
  const fromNode = await uploadFile(options, Readable.from(pieces(data, 64 * 1024)), {
    name: 'data.bin',
    size: data.length,
  });
  assert.equal(fromNode.size, data.length);
  assert.equal(fromNode.sha256, sha256(data));
  assert.equal(fromNode.contentType, 'application/octet-stream');
  const chunked = await uploadFile(options, Readable.from(pieces(data, 100_000)), {
    name: 'chunked.bin',
  });
  assert.equal(chunked.sha256, fromNode.sha256);
  const fromWeb = await uploadFile(options, new Blob([data]).stream(), {
    name: 'web.bin',
    contentType: 'application/x-test',
  });
  assert.equal(fromWeb.contentType, 'application/x-test');
  assert.equal(fromWeb.sha256, fromNode.sha256);
  const fromBytes = await uploadFile(options, new Uint8Array(data), { name: 'bytes.bin' });
  assert.equal(fromBytes.size, data.length);

  // The list: upload order, a name prefix, a type, and keyset pages.
  const all = await unwrap(api.GET('/files'));
  assert.deepEqual(
    all.map((f) => f.name),
    ['note.txt', 'data.bin', 'chunked.bin', 'web.bin', 'bytes.bin'],
  );
  const prefixed = await unwrap(api.GET('/files', { params: { query: { name: 'data' } } }));
  assert.deepEqual(
    prefixed.map((f) => f.id),
    [fromNode.id],
  );
  const typed = await unwrap(
    api.GET('/files', { params: { query: { contentType: 'application/x-test' } } }),
  );
  assert.deepEqual(
    typed.map((f) => f.id),
    [fromWeb.id],
  );
  const first = await api.GET('/files', { params: { query: { limit: 2 } } });
  assert.equal(first.data?.length, 2);
  // The pages as an app walks them: the cursor of each page's Link, until a page has none.
  const { next } = pageCursors(first.response);
  assert.deepEqual(next, { id: fromNode.id });
  const following = await api.GET('/files', { params: { query: { limit: 2, after: next } } });
  assert.deepEqual(
    following.data?.map((f) => f.id),
    [chunked.id, fromWeb.id],
  );
  const last = await api.GET('/files', {
    params: { query: { limit: 2, after: pageCursors(following.response).next } },
  });
  assert.deepEqual(
    last.data?.map((f) => f.id),
    [fromBytes.id],
  );
  assert.deepEqual(pageCursors(last.response), {});
  const second = await unwrap(
    api.GET('/files', { params: { query: { limit: 2, after: { id: note.id } } } }),
  );
  assert.deepEqual(
    second.map((f) => f.id),
    [fromNode.id, chunked.id],
  );
  assert.equal(
    (await unwrap(api.GET('/files/{id}', { params: { path: { id: note.id } } }))).name,
    'note.txt',
  );

  // Whole, a range across a chunk boundary, the last bytes, and a conditional download.
  const whole = await downloadFile(options, fromNode.id);
  assert.equal(whole.status, 200);
  assert.equal(whole.headers.get('ETag'), `"${fromNode.sha256}"`);
  assert.equal(whole.headers.get('X-Content-Type-Options'), 'nosniff');
  assert.match(whole.headers.get('Content-Disposition') ?? '', /^attachment; filename="data.bin"/);
  assert.ok((await bytesOf(whole)).equals(data));
  const start = 255 * 1024 - 10;
  const part = await downloadFile(options, fromNode.id, { range: { start, end: start + 99 } });
  assert.equal(part.status, 206);
  assert.equal(part.headers.get('Content-Range'), `bytes ${start}-${start + 99}/${data.length}`);
  assert.ok((await bytesOf(part)).equals(data.subarray(start, start + 100)));
  const tail = await downloadFile(options, fromNode.id, { range: { last: 5 } });
  assert.ok((await bytesOf(tail)).equals(data.subarray(data.length - 5)));
  const same = await downloadFile(options, fromNode.id, { ifNoneMatch: `"${fromNode.sha256}"` });
  assert.equal(same.status, 304);
  const inline = await downloadFile(options, note.id);
  assert.match(inline.headers.get('Content-Disposition') ?? '', /^inline/);
  assert.equal(await inline.text(), text);
  await rejectsWith(
    downloadFile(options, note.id, { range: { start: 1000 } }),
    416,
    'RANGE_NOT_SATISFIABLE',
  );

  // A signed link works without a key; once the file is deleted it answers 404.
  const link = await createFileLink(options, fromNode.id, 60);
  assert.ok(link.url.endsWith(link.path));
  assert.ok(Date.parse(link.expiresAt) > Date.now());
  const linked = await downloadFileLink(link.url, { range: { start: 0, end: 9 } });
  assert.equal(linked.status, 206);
  assert.ok((await bytesOf(linked)).equals(data.subarray(0, 10)));
  await rejectsWith(downloadFileLink(`${link.url.slice(0, -2)}xx`), 403, 'FILE_LINK_INVALID');

  // A retry under the same Idempotency-Key answers the first upload; nothing is stored twice.
  const key = unique('upload');
  const once = await uploadFile(options, new Blob(['once']), {
    name: 'once.txt',
    idempotencyKey: key,
  });
  const again = await uploadFile(options, new Blob(['once']), {
    name: 'once.txt',
    idempotencyKey: key,
  });
  assert.equal(again.id, once.id);
  assert.equal(
    (await unwrap(api.GET('/files', { params: { query: { name: 'once' } } }))).length,
    1,
  );

  // GET /me counts the tenant's bytes.
  const stored = [note, fromNode, chunked, fromWeb, fromBytes, once];
  const me = await unwrap(api.GET('/me'));
  assert.equal(
    me.quota.files?.used,
    stored.reduce((sum, f) => sum + f.size, 0),
  );

  const deleted = await api.DELETE('/files/{id}', { params: { path: { id: fromNode.id } } });
  assert.equal(deleted.response.status, 204);
  expectProblem(
    await api.GET('/files/{id}', { params: { path: { id: fromNode.id } } }),
    404,
    'FILE_NOT_FOUND',
  );
  await rejectsWith(downloadFileLink(link.url), 404, 'FILE_NOT_FOUND');
  assert.equal(
    (await unwrap(api.GET('/me'))).quota.files?.used,
    (me.quota.files?.used ?? 0) - fromNode.size,
  );
}

/** A sub key uploads and sees its own files only; the root sees every file of the namespace. */
export async function subFilesFlow(target: Target): Promise<void> {
  const { api: root, apiKey } = await newUser(target);
  const account = { clientId: 'files-app', accountId: unique('acct') };
  await unwrap(
    root.POST('/profile', { body: { ...account, email: `${account.accountId}@example.com` } }),
  );
  const issued = await unwrap(root.POST('/api-keys', { body: { ...account, name: 'files' } }));
  const rootOptions = { baseUrl: target.baseUrl, apiKey };
  const subOptions = { baseUrl: target.baseUrl, apiKey: issued.apiKey };
  const sub = createApiClient(subOptions);

  const rootFile = await uploadFile(rootOptions, new Blob(['root']), { name: 'root.txt' });
  const subFile = await uploadFile(subOptions, new Blob(['sub']), { name: 'sub.txt' });
  assert.equal(subFile.owner, account.accountId);

  assert.deepEqual(
    (await unwrap(sub.GET('/files'))).map((f) => f.id),
    [subFile.id],
  );
  assert.deepEqual(
    (await unwrap(root.GET('/files'))).map((f) => f.id),
    [rootFile.id, subFile.id],
  );
  expectProblem(
    await sub.GET('/files/{id}', { params: { path: { id: rootFile.id } } }),
    404,
    'FILE_NOT_FOUND',
  );
  await rejectsWith(downloadFile(subOptions, rootFile.id), 404, 'FILE_NOT_FOUND');
  assert.equal(await (await downloadFile(rootOptions, subFile.id)).text(), 'sub');
}
