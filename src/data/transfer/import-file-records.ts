import { ValidationFailedError } from '../../common/errors';
import { parseRfc3339 } from '../../common/pagination/rfc3339';
import { checkName, checkType } from '../../files';

/** A `file` line as an import reads it. */
export interface ImportedFile {
  id: string;
  name: string;
  contentType: string;
  size: number;
  sha256: string;
  createdAt: Date;
  owner: string;
}

export type FileImportRecord =
  | { type: 'file'; file: ImportedFile }
  | { type: 'file-chunk'; id: string; n: number; data: Buffer };

const FILE_ID = /^[0-9a-f]{24}$/;
const SHA256 = /^[0-9a-f]{64}$/;
/** Base64 of RFC 4648 §4, padded: what an export writes. */
const BASE64 = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/;

function invalid(field: string, message: string): ValidationFailedError {
  return new ValidationFailedError([{ field, message }]);
}

/** A `file` line: the file's metadata, checked as an upload's would be. */
export function parseFileLine(value: Record<string, unknown>): FileImportRecord {
  const file = value.file;
  if (typeof file !== 'object' || file === null || Array.isArray(file))
    throw invalid('file', 'is required: {id, name, contentType, size, sha256, createdAt, owner}');
  const { id, name, contentType, size, sha256, createdAt, owner } = file as Record<string, unknown>;
  if (typeof id !== 'string' || !FILE_ID.test(id))
    throw invalid('file.id', 'must be 24 hex digits');
  if (typeof name !== 'string') throw invalid('file.name', 'must be a string');
  if (typeof contentType !== 'string') throw invalid('file.contentType', 'must be a media type');
  if (typeof size !== 'number' || !Number.isSafeInteger(size) || size < 0)
    throw invalid('file.size', 'must be a whole number');
  if (typeof sha256 !== 'string' || !SHA256.test(sha256))
    throw invalid('file.sha256', 'must be 64 hex digits');
  const created = typeof createdAt === 'string' ? parseRfc3339(createdAt) : null;
  if (!created) throw invalid('file.createdAt', 'must be an RFC 3339 date-time');
  if (typeof owner !== 'string' || owner.length === 0 || owner.length > 512)
    throw invalid('file.owner', 'must be a string of 1-512 characters');
  return {
    type: 'file',
    file: {
      id,
      name: checkName(name, 'file.name'),
      contentType: checkType(contentType, 'file.contentType'),
      size,
      sha256,
      createdAt: created.date,
      owner,
    },
  };
}

/** A `file-chunk` line: the file's id, the chunk's place and its bytes. */
export function parseChunkLine(value: Record<string, unknown>): FileImportRecord {
  const { id, n, data } = value;
  if (typeof id !== 'string' || !FILE_ID.test(id)) throw invalid('id', 'must be 24 hex digits');
  if (typeof n !== 'number' || !Number.isSafeInteger(n) || n < 0)
    throw invalid('n', 'must be a whole number');
  if (typeof data !== 'string' || !BASE64.test(data))
    throw invalid('data', 'must be base64 (RFC 4648, padded)');
  return { type: 'file-chunk', id, n, data: Buffer.from(data, 'base64') };
}
