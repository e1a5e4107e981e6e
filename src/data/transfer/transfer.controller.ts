import {
  Controller,
  Get,
  Headers,
  HttpCode,
  HttpStatus,
  Inject,
  Post,
  Query,
  Req,
  Res,
} from '@nestjs/common';
import {
  ApiBody,
  ApiConflictResponse,
  ApiConsumes,
  ApiExtraModels,
  ApiNotFoundResponse,
  ApiOkResponse,
  ApiPayloadTooLargeResponse,
  ApiTags,
  ApiUnsupportedMediaTypeResponse,
} from '@nestjs/swagger';
import type { Request, Response } from 'express';
import {
  checkCollectionAccess,
  readableBy,
  Auth,
  CurrentPrincipal,
  tenantOf,
  type CustomerPrincipal,
  NeedsScope,
} from '../../auth';
import { ProblemDto, ValidationFailedError } from '../../common/errors';
import { hasBody, type StreamedBody } from '../../common/http/body';
import { NDJSON, readBodyLines, sendLines } from '../../common/http/ndjson';
import { APP_CONFIG, type AppConfig } from '../../config';
import { ShutdownState } from '../../health/shutdown.state';
import { MeteredAs } from '../../usage';
import { ownerScopeOf } from '../items/item-scope';
import { accessPlanOf } from '../access/access-plan';
import { ownerFieldOf } from '../query/data-requests';
import { guardFieldName } from '../query/json-guard';
import {
  IMPORT_LINE,
  IMPORT_RESULT_LINE,
  ImportItemRecordDto,
  ImportManifestDto,
  ImportQueryDto,
  ImportResultLineDto,
  ImportTotalsDto,
} from './dto/import.dto';
import {
  EXPORT_LINE,
  ExportEndRecordDto,
  ExportFileChunkRecordDto,
  ExportFileRecordDto,
  ExportItemRecordDto,
  ExportManifestDto,
  ExportQueryDto,
} from './dto/transfer.dto';
import { NamespaceExport } from './namespace-export';
import { NamespaceImport } from './namespace-import';

/**
 * POST /import reads its body itself (a stream of lines): the body middleware only checks its
 * type and encoding; its size is the tenant's, checked once the key is known.
 */
export const IMPORT_BODY: StreamedBody = {
  method: 'POST',
  path: '/import',
  type: NDJSON,
  maxBytes: null,
};

/**
 * `/export` and `/import`: the caller's namespace in the request branch as NDJSON, out and in
 * (docs/data.md, "Export and import"). Both stream: an export is read as the client takes it; an
 * import answers each line as it is written.
 */
@ApiTags('data')
@ApiExtraModels(
  ExportManifestDto,
  ExportItemRecordDto,
  ExportFileRecordDto,
  ExportFileChunkRecordDto,
  ExportEndRecordDto,
  ImportManifestDto,
  ImportItemRecordDto,
  ImportResultLineDto,
  ImportTotalsDto,
)
// On every write route, as everywhere: POST /import is not keyed (UNKEYED_POSTS), so the
// interceptor lets it through and the handler refuses the header.
@Controller()
@Auth('root', 'sub', 'team')
export class TransferController {
  constructor(
    private readonly exporter: NamespaceExport,
    private readonly importer: NamespaceImport,
    private readonly shutdown: ShutdownState,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}

  /**
   * Exports the namespace: a manifest, every item by collection then `_id`, every file (by id,
   * its bytes in base64 chunk lines; not with `collections` unless `files=true`), and an end line
   * with the line count, the file count and the SHA-256. gzip when Accept-Encoding allows. A sub
   * key gets the items its collections' read rules let it read, without their protected fields,
   * and the files it owns. Nothing is locked: writes go on, and GET
   * /events?after=<feedPosition> gives what changed since the export began. A download cut short
   * lacks the end line; resume it with `after` = the last complete item's `<collection>/<_id>`,
   * or `~files/<id>` of the last file whose chunks all came.
   */
  @Get('export')
  @NeedsScope('export')
  @MeteredAs('export')
  @ApiOkResponse({
    description: 'The export, one record per line (streamed)',
    content: { [NDJSON]: { schema: EXPORT_LINE } },
  })
  @ApiNotFoundResponse({
    type: ProblemDto,
    description: 'COLLECTION_NOT_FOUND: `collections` names a collection that does not exist',
  })
  async exportNamespace(
    @CurrentPrincipal() principal: CustomerPrincipal,
    @Query() query: ExportQueryDto,
    @Req() req: Request,
    @Res() res: Response,
  ): Promise<void> {
    const ownerField = ownerFieldOf(query.authField);
    const owner = ownerScopeOf(principal, ownerField);
    const collections = query.collections?.split(',') ?? null;
    // Named collections the key may not read are refused before anything is read; without
    // `collections`, the export leaves them out.
    for (const name of collections ?? []) checkCollectionAccess(principal, name, 'read');
    const readable = readableBy(principal);
    const lines = this.exporter.lines(
      {
        tenant: tenantOf(principal),
        branch: principal.branch,
        owner,
        // Each collection's items as the key's access plan reads them (docs/data.md, "Access rules").
        access: (entry) => accessPlanOf(principal, entry, ownerField),
        ...(readable && { readable }),
      },
      {
        collections,
        after: query.after ?? null,
        // A part of the items leaves the files out, unless asked for.
        files: query.files === undefined ? query.collections === undefined : query.files === 'true',
      },
    );
    // At shutdown the download is cut: the client resumes it with `after` on another instance.
    await this.untilDrain((signal) => sendLines(req, res, lines, { signal }));
  }

  /**
   * Imports NDJSON records — an export, or item lines alone — into the namespace. Each item is
   * written under the rules of POST /data/{collection}, but keeps its `_id`, `_createdAt` and
   * `_updatedAt`, and a root or team key keeps its owner values (a sub key's import makes every
   * item its own). A file line and its chunk lines store a file under its id, time and owner,
   * its size reserved against the quota first; it is kept only when its bytes have the declared
   * size and SHA-256 (the last line answers 201, 200 or the failure; the ones before it 202).
   * `mode=upsert` replaces items by `_id` and files by id; `dryRun=true` writes nothing. The
   * response streams a result line per input line, in order, then the totals; a line's failure
   * does not stop the others. The import stops — the totals say where and why — at a line beyond
   * IMPORT_MAX_LINES, a body beyond IMPORT_MAX_BYTES or that does not decode, or the database
   * failing. Idempotency-Key is not taken: `mode=upsert` makes a repeated import of items with
   * `_id`s write the same items again. An item line that would take its collection past the item
   * limit is refused alone (409 ITEM_QUOTA_EXCEEDED, or PLAN_LIMIT_EXCEEDED under a plan); an
   * upsert that replaces a stored item takes no new place.
   */
  @Post('import')
  @NeedsScope('import')
  @MeteredAs('import')
  @HttpCode(HttpStatus.OK)
  @ApiConsumes(NDJSON)
  @ApiBody({
    description:
      'NDJSON, optionally gzip, deflate or br Content-Encoding: records of the export format (a manifest and an end are optional; item lines alone will do)',
    schema: IMPORT_LINE,
  })
  @ApiOkResponse({
    description: 'A result line per input line, then the totals (streamed)',
    content: { [NDJSON]: { schema: IMPORT_RESULT_LINE } },
  })
  @ApiPayloadTooLargeResponse({
    type: ProblemDto,
    description:
      'PAYLOAD_TOO_LARGE: Content-Length over IMPORT_MAX_BYTES, the tenant having no plan (members `limit: importBytes`, `max`, `usage`, `plan: null`); a body that turns out longer stops at the result line where reading stopped, with the same problem',
  })
  @ApiConflictResponse({
    type: ProblemDto,
    description:
      "PLAN_LIMIT_EXCEEDED: Content-Length over the importBytes of the tenant's plan (members `limit`, `max`, `usage`, `plan`); a body that turns out longer stops at a result line with the same problem. Collections, indexes and file bytes an import would add past the tenant's limits fail their lines the same way (COLLECTION_QUOTA_EXCEEDED, INDEX_QUOTA_EXCEEDED, FILE_QUOTA_EXCEEDED without a plan)",
  })
  @ApiUnsupportedMediaTypeResponse({
    type: ProblemDto,
    description:
      'UNSUPPORTED_MEDIA_TYPE: the body is not application/x-ndjson; UNSUPPORTED_CONTENT_ENCODING: not gzip, deflate, br or none',
  })
  async importNamespace(
    @CurrentPrincipal() principal: CustomerPrincipal,
    @Query() query: ImportQueryDto,
    @Headers('idempotency-key') idempotencyKey: string | undefined,
    @Req() req: Request,
    @Res() res: Response,
  ): Promise<void> {
    if (!hasBody(req))
      throw new ValidationFailedError([
        { field: 'body', message: 'is required: the NDJSON lines to import' },
      ]);
    if (idempotencyKey !== undefined)
      throw new ValidationFailedError([
        {
          field: 'Idempotency-Key',
          message: 'is not taken by POST /import; repeat it with mode=upsert instead',
        },
      ]);
    const options = {
      mode: query.mode ?? 'insert',
      dryRun: query.dryRun === 'true',
      settings: {
        ownerField: ownerFieldOf(query.authField),
        uniqueField:
          query.uniqueField === undefined ? null : guardFieldName(query.uniqueField, 'uniqueField'),
      },
    } as const;
    const limit = await this.importer.bodyLimit(principal);
    const declared = Number(req.headers['content-length'] ?? 0);
    if (limit.max !== null && declared > limit.max) throw limit.exceeded(declared);
    const lines = readBodyLines(req, {
      maxLineBytes: this.config.limits.importMaxLineBytes,
      maxBytes: limit.max ?? Infinity,
    });
    // An import that stopped early leaves the rest of the body unread: the connection goes with
    // the response rather than reading it all.
    res.once('finish', () => {
      // (A connection closing after this response has let go of its socket already.)
      if (!req.complete) req.socket?.destroy();
    });
    // Each result goes out as soon as its line is written: a client may wait for it. At
    // shutdown the import stops reading and answers its totals (SHUTTING_DOWN).
    await this.untilDrain((signal) =>
      sendLines(req, res, this.importer.run(principal, { lines, limit }, options, signal), {
        compress: false,
        chunkChars: 0,
      }),
    );
  }

  /** Runs `work` with a signal that aborts when the instance begins to drain. */
  private async untilDrain(work: (signal: AbortSignal) => Promise<void>): Promise<void> {
    const drain = new AbortController();
    const stop = this.shutdown.onDrain(() => drain.abort());
    try {
      await work(drain.signal);
    } finally {
      stop();
    }
  }
}
