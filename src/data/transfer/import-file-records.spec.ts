import { ValidationFailedError } from '../../common/errors';
import { parseChunkLine, parseFileLine } from './import-file-records';
import { endMismatch } from './import-records';
import { RecordDigest } from './transfer-format';

const file = {
  id: '665f1c2a9b1e8a0012345678',
  name: 'a.txt',
  contentType: 'text/plain',
  size: 3,
  sha256: 'ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad',
  createdAt: '2026-01-05T10:00:00.000Z',
  owner: 'auth0|ada',
};

function fieldOf(fn: () => unknown): string | undefined {
  try {
    fn();
  } catch (error) {
    if (error instanceof ValidationFailedError) return error.errors?.[0]?.field;
    throw error;
  }
  return undefined;
}

describe('file records of an import', () => {
  it('reads a file line, its time as a date', () => {
    expect(parseFileLine({ type: 'file', file })).toEqual({
      type: 'file',
      file: { ...file, createdAt: new Date(file.createdAt) },
    });
  });

  it.each([
    [{ id: 'x' }, 'file.id'],
    [{ name: 'a/b' }, 'file.name'],
    [{ contentType: 'not a type' }, 'file.contentType'],
    [{ size: -1 }, 'file.size'],
    [{ size: 1.5 }, 'file.size'],
    [{ sha256: 'ABC' }, 'file.sha256'],
    [{ createdAt: 'yesterday' }, 'file.createdAt'],
    [{ owner: '' }, 'file.owner'],
  ])('refuses a file line with %j', (change, field) => {
    expect(fieldOf(() => parseFileLine({ type: 'file', file: { ...file, ...change } }))).toBe(
      field,
    );
  });

  it('reads a chunk line as its bytes, and refuses what is not padded base64', () => {
    expect(parseChunkLine({ id: file.id, n: 0, data: 'YWJj' })).toEqual({
      type: 'file-chunk',
      id: file.id,
      n: 0,
      data: Buffer.from('abc'),
    });
    expect(parseChunkLine({ id: file.id, n: 1, data: '' })).toMatchObject({
      data: Buffer.alloc(0),
    });
    for (const data of ['YWJ', 'YW=j', '*not*', 'YWJj\n', 42])
      expect(fieldOf(() => parseChunkLine({ id: file.id, n: 0, data }))).toBe('data');
    expect(fieldOf(() => parseChunkLine({ id: file.id, n: -1, data: 'YWJj' }))).toBe('n');
  });

  it('checks an end line against the lines and file lines read', () => {
    const digest = new RecordDigest();
    digest.add('{"type":"item"}');
    digest.addFile('{"type":"file"}');
    const read = digest.end(true);
    expect(read).toMatchObject({ items: 2, files: 1 });
    const end = { type: 'end' as const, items: 2, files: 1, sha256: read.sha256 };
    expect(endMismatch(read, end)).toBeNull();
    expect(endMismatch(read, { ...end, files: undefined })).toBeNull();
    expect(endMismatch(read, { ...end, files: 2 })?.message).toContain('1 file lines');
    expect(endMismatch(read, { ...end, items: 3 })?.code).toBe('DIGEST_MISMATCH');
  });
});
