import { Logger } from '@nestjs/common';
import { createHash, type Hash } from 'node:crypto';
import { Readable } from 'node:stream';
import { ownerValueOf, tenantOf, type CustomerPrincipal } from '../../auth';
import { DomainError, PayloadTooLargeError, ValidationFailedError } from '../../common/errors';
import { DATA_ERRORS } from '../data.errors';
import {
  FileExistsError,
  FileIdTakenError,
  type FileRestores,
  type FilesService,
} from '../../files';
import type { LineWork } from './import-batch-lines';
import type { ImportOptions } from './import-options';
import type { FileImportRecord, ImportedFile } from './import-file-records';
import { DigestMismatchError } from './import-records';
import { failure, lineFailure, ok, type Outcome } from './import-results';

/** A line of a file that failed, or whose file line is not the one before it. */
export class FileNotImportedError extends DomainError {
  constructor(detail: string) {
    super(DATA_ERRORS.FILE_NOT_IMPORTED, detail);
  }
}

const EMPTY_SHA256 = createHash('sha256').digest('hex');

/** The file whose chunk lines are being read. */
interface OpenFile {
  file: ImportedFile;
  /** Bytes of the lines taken so far (when it reaches `size`, the file's last line is read). */
  taken: number;
  /** Run as the lines are written: the next chunk's `n`, the bytes and their digest. */
  next: number;
  received: number;
  hash: Hash;
  /** The bytes on their way to storage (none in a dry run), and the store's outcome. */
  body: Readable | null;
  stored: Promise<{ replaced: boolean }> | null;
  /** Resolves when storage wants more bytes. */
  wants: (() => void) | null;
  /** Storage failed (the lines after it answer the failure without waiting for their turn). */
  storeFailed: Error | null;
  /** A dry run: whether the file would replace one. */
  replaces: boolean;
  /** The line the file failed at. */
  failedAt: number | null;
}

/**
 * The files of one import: a `file` line opens a file, its `file-chunk` lines stream its bytes
 * into storage as they are read (FileRestores: the declared size is reserved up front), and the
 * line that brings the last byte completes it — stored when the bytes have the declared size and
 * SHA-256, else nothing of it stays. The file line and the chunk lines before the last answer
 * 202; the last line answers the file's outcome (201, 200 replaced, or the failure); the lines
 * of a file that failed answer 424. Every other line ends a file whose bytes have not all come:
 * it is not stored (`incomplete`). A file's lines are written one after the other, in order.
 */
export class ImportFiles {
  private open: OpenFile | null = null;
  private chain: Promise<unknown> = Promise.resolve();
  private incomplete = 0;
  private readonly logger = new Logger('Import');

  /** Files are stored under their kept ids (FileRestores), up to `maxBytes` each. */
  constructor(
    private readonly restores: FileRestores,
    private readonly files: FilesService,
    private readonly maxBytes: number,
    private readonly principal: CustomerPrincipal,
    private readonly options: ImportOptions,
  ) {}

  /** The work of a file or file-chunk line. */
  take(line: number, record: FileImportRecord): LineWork {
    if (record.type === 'file') {
      this.interrupt();
      const open: OpenFile = {
        file: record.file,
        taken: 0,
        next: 0,
        received: 0,
        hash: createHash('sha256'),
        body: null,
        stored: null,
        wants: null,
        storeFailed: null,
        replaces: false,
        failedAt: null,
      };
      if (record.file.size > 0) this.open = open;
      return this.sequenced(line, open, () => this.begin(line, open));
    }
    const open = this.open;
    if (open?.file.id !== record.id) {
      const detail = `No file ${record.id} is being read: its file line failed or is not before its chunk lines.`;
      return {
        barrier: false,
        lines: 1,
        run: () => Promise.resolve([failure(line, notImported(detail))]),
      };
    }
    open.taken += record.data.length;
    if (open.taken >= open.file.size) this.open = null;
    return this.sequenced(line, open, () => this.chunk(line, open, record));
  }

  /** A line that is not the open file's: the file is left incomplete and nothing of it stays. */
  interrupt(): void {
    const open = this.open;
    if (open === null) return;
    this.open = null;
    this.chain = this.chain.then(() => {
      // A file that failed on a line of its own is not counted again.
      if (open.failedAt === null) this.incomplete += 1;
      return abandon(open);
    });
  }

  /** Ends the import's files (an open one is incomplete); resolves how many were incomplete. */
  async finish(): Promise<number> {
    this.interrupt();
    await this.chain;
    return this.incomplete;
  }

  /** Runs a line's work after the file lines before it; a failure fails its file. */
  private sequenced(line: number, open: OpenFile, work: () => Promise<Outcome>): LineWork {
    const run = async (): Promise<Outcome[]> => {
      const turn = this.chain.then(async (): Promise<Outcome> => {
        if (open.failedAt !== null)
          return failure(line, notImported(`Its file failed at line ${open.failedAt}.`));
        try {
          return await work();
        } catch (error) {
          open.failedAt = line;
          await abandon(open);
          return lineFailure(line, error, (e) =>
            this.logger.error({ err: e }, 'import file failed'),
          );
        }
      });
      this.chain = turn.catch(() => undefined);
      return [await turn];
    };
    return { barrier: false, lines: 1, run };
  }

  /** A file line: may the file be stored here? Its storing begins (an empty file: all of it). */
  private async begin(line: number, open: OpenFile): Promise<Outcome> {
    const { file } = open;
    if (file.size > this.maxBytes) throw new PayloadTooLargeError(this.maxBytes);
    if (file.size === 0 && file.sha256 !== EMPTY_SHA256) throw mismatch(file, 0, EMPTY_SHA256);
    const upsert = this.options.mode === 'upsert';
    if (this.options.dryRun) {
      const held = await this.restores.holderOf(this.principal, file.id);
      if (held.holder === 'other') throw new FileIdTakenError(file.id);
      if (held.holder === 'own' && !upsert) throw new FileExistsError(file.id);
      open.replaces = held.holder === 'own';
      const tenant = tenantOf(this.principal);
      const { used, limit } = await this.files.usage(tenant);
      const freed = held.holder === 'own' ? held.file.size : 0;
      if (limit !== null && used - freed + file.size > limit)
        throw await this.files.quotaExceeded(tenant, used, file.size);
      return ok(line, file.size > 0 ? 202 : open.replaces ? 200 : 201, file.id);
    }
    let reading = (): void => undefined;
    const started = new Promise<void>((resolve) => (reading = resolve));
    const body = new Readable({
      read: () => {
        reading();
        const wants = open.wants;
        open.wants = null;
        wants?.();
      },
    });
    open.body = body;
    // Its end is reported through `stored` (a body given up before storage reads it too).
    body.on('error', () => undefined);
    if (file.size === 0) body.push(null);
    const owner = this.principal.kind === 'sub' ? ownerValueOf(this.principal) : file.owner;
    const stored = this.restores
      .restore(
        this.principal,
        { name: file.name, contentType: file.contentType, body, declaredBytes: file.size },
        { id: file.id, createdAt: file.createdAt, owner },
        upsert,
      )
      .then(({ replaced }) => ({ replaced }));
    open.stored = stored;
    // Its failure is answered by the next line of the file, or given up with the file.
    stored.catch((error: unknown) => {
      open.storeFailed = error instanceof Error ? error : new Error(String(error));
    });
    if (file.size === 0) return ok(line, (await stored).replaced ? 200 : 201, file.id);
    // The file line answers once storage takes bytes, or with the reason it will not.
    await Promise.race([started, stored]);
    return ok(line, 202, file.id);
  }

  /** A chunk line of the open file: its bytes go to storage; the last one completes the file. */
  private async chunk(
    line: number,
    open: OpenFile,
    record: Extract<FileImportRecord, { type: 'file-chunk' }>,
  ): Promise<Outcome> {
    const { file } = open;
    if (record.n !== open.next)
      throw new ValidationFailedError([{ field: 'n', message: `must be ${open.next}` }]);
    if (open.received + record.data.length > file.size)
      throw new ValidationFailedError([
        { field: 'data', message: `brings the file past its size (${file.size} bytes)` },
      ]);
    if (open.storeFailed !== null) throw open.storeFailed;
    open.next += 1;
    open.received += record.data.length;
    open.hash.update(record.data);
    const last = open.received === file.size;
    const sha256 = last ? open.hash.digest('hex') : '';
    if (last && sha256 !== file.sha256) throw mismatch(file, open.received, sha256);
    if (open.body && open.stored) {
      if (!open.body.push(record.data))
        await Promise.race([new Promise<void>((resolve) => (open.wants = resolve)), open.stored]);
      if (last) {
        open.body.push(null);
        return ok(line, (await open.stored).replaced ? 200 : 201, file.id);
      }
    }
    if (last) return ok(line, open.replaces ? 200 : 201, file.id);
    return ok(line, 202, file.id);
  }
}

function notImported(detail: string): FileNotImportedError {
  return new FileNotImportedError(detail);
}

function mismatch(file: ImportedFile, bytes: number, sha256: string): DigestMismatchError {
  return new DigestMismatchError(
    `The file ${file.id} declares ${file.size} bytes of SHA-256 ${file.sha256}; its chunk lines brought ${bytes} bytes of SHA-256 ${sha256}: the file is damaged. Nothing of it was stored.`,
  );
}

/** Gives a file's storing up: nothing of it stays (FileUploads removes what it wrote). */
async function abandon(open: OpenFile): Promise<void> {
  open.body?.destroy(new Error('the file was not imported whole'));
  await open.stored?.catch(() => undefined);
}
