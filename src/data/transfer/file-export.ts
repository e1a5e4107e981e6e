import { Injectable } from '@nestjs/common';
import type { Namespace } from '../../common/tenancy/namespace';
import { FileContents, FileDto, FileRecordsRepository, type FileRecord } from '../../files';
import {
  FILE_CHUNK_BYTES,
  type ExportedFile,
  type FileChunkLine,
  type FileLine,
} from './transfer-format';

/** File records read per round trip of an export. */
const FILE_BATCH = 100;

/** A line of the files' part of an export, and whether it is a `file` line. */
export interface FileExportLine {
  line: string;
  file: boolean;
}

/** A file as its export line carries it: the JSON GET /files/{id} answers. */
function exported(file: FileRecord): ExportedFile {
  return { ...FileDto.from(file) };
}

/**
 * The files of a namespace as export lines: in `_id` (upload) order, each a `file` line and its
 * bytes as `file-chunk` lines of FILE_CHUNK_BYTES (the last one shorter; none for an empty
 * file). The bytes are read from storage as a stream and cut as they come: memory holds a chunk
 * line and what the stream buffers, whatever the file's size.
 */
@Injectable()
export class FileExport {
  constructor(
    private readonly records: FileRecordsRepository,
    private readonly contents: FileContents,
  ) {}

  /** How many stored files the export covers and their bytes, when it begins. */
  totals(namespace: Namespace, owner: string | null): Promise<{ count: number; bytes: number }> {
    return this.records.storedTotals(namespace, owner ?? undefined);
  }

  /** The lines of the files after `afterId` (null: all), of `owner` only when it is given. */
  async *lines(
    namespace: Namespace,
    owner: string | null,
    afterId: string | null,
  ): AsyncGenerator<FileExportLine> {
    let after = afterId;
    for (;;) {
      const page = await this.records.list(namespace, {
        limit: FILE_BATCH,
        ...(after !== null ? { after } : {}),
        ...(owner !== null ? { owner } : {}),
      });
      for (const file of page.slice(0, FILE_BATCH)) {
        const line: FileLine = { type: 'file', file: exported(file) };
        yield { line: JSON.stringify(line), file: true };
        for await (const chunk of this.chunksOf(file)) yield { line: chunk, file: false };
        after = file.fileId;
      }
      if (page.length <= FILE_BATCH) return;
    }
  }

  /** A file's chunk lines: its bytes re-cut into FILE_CHUNK_BYTES pieces as they are read. */
  private async *chunksOf(file: FileRecord): AsyncGenerator<string> {
    if (file.size === 0) return;
    let n = 0;
    let parts: Buffer[] = [];
    let held = 0;
    const line = (bytes: Buffer): string => {
      const record: FileChunkLine = {
        type: 'file-chunk',
        id: file.fileId,
        n: n++,
        data: bytes.toString('base64'),
      };
      return JSON.stringify(record);
    };
    for await (const piece of this.contents.read(file.location, file.id) as AsyncIterable<Buffer>) {
      parts.push(piece);
      held += piece.length;
      while (held >= FILE_CHUNK_BYTES) {
        const joined = Buffer.concat(parts);
        yield line(joined.subarray(0, FILE_CHUNK_BYTES));
        const rest = joined.subarray(FILE_CHUNK_BYTES);
        parts = rest.length > 0 ? [rest] : [];
        held = rest.length;
      }
    }
    if (held > 0) yield line(Buffer.concat(parts));
  }
}
