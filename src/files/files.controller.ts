import {
  Body,
  Controller,
  Delete,
  Get,
  HttpCode,
  HttpStatus,
  Inject,
  Param,
  Post,
  Query,
  Req,
  Res,
} from '@nestjs/common';
import {
  ApiBadRequestResponse,
  ApiBody,
  ApiConflictResponse,
  ApiConsumes,
  ApiCreatedResponse,
  ApiExtension,
  ApiNoContentResponse,
  ApiNotFoundResponse,
  ApiOkResponse,
  ApiPayloadTooLargeResponse,
  ApiQuery,
  ApiTags,
} from '@nestjs/swagger';
import type { Request, Response } from 'express';
import { Auth, CurrentPrincipal, type CustomerPrincipal, NeedsScope } from '../auth';
import { PayloadTooLargeError, ProblemDto, ValidationFailedError } from '../common/errors';
import type { StreamedBody } from '../common/http/body';
import { REQUEST_BODY_CONTENT } from '../common/http/openapi-shared';
import {
  ApiKeysetList,
  nextPageLink,
  parseKeysetPage,
  type KeysetParamRule,
} from '../common/pagination/keyset-page';
import { Reply } from '../common/http/reply';
import { APP_CONFIG, type AppConfig } from '../config';
import { FileDto, FileLinkDto, FileLinkRequestDto } from './dto/file.dto';
import { ApiFileContent } from './dto/file.openapi';
import { FileContents, FileTooLargeError } from './file-contents';
import { sendFile } from './file-download';
import { FileUploads } from './file-uploads';
import { FilesService } from './files.service';
import { normalisedMediaType } from './media-type';
import { checkName, MULTIPART_OVERHEAD_BYTES, uploadOf } from './upload-body';

const FILE_ID = /^[0-9a-f]{24}$/;

/** The list's filters, `name` and `contentType`. */
const filterRule: KeysetParamRule = (value) =>
  value.length > 255 ? 'must be at most 255 characters' : undefined;

const FILE_NOT_FOUND = ApiNotFoundResponse({ type: ProblemDto, description: 'FILE_NOT_FOUND' });

/** POST /files reads its body itself (any media type, bytes as sent): the middleware only checks its size. */
export function filesBody(config: AppConfig): StreamedBody {
  return {
    method: 'POST',
    path: '/files',
    type: null,
    maxBytes: config.files.maxBytes + MULTIPART_OVERHEAD_BYTES,
    identityOnly: true,
  };
}

/** The most of a refused upload's body that is read to its end rather than cut off. */
const DRAIN_MAX_BYTES = 1024 * 1024;

/**
 * What becomes of the rest of a refused upload's body. A small one (Content-Length up to
 * DRAIN_MAX_BYTES) is read and dropped, so that the client, still sending, gets the answer
 * rather than a reset connection; a larger or chunked one is cut off with the answer.
 */
function leaveBody(req: Request, res: Response): void {
  const length = Number(req.headers['content-length'] ?? Number.NaN);
  if (Number.isFinite(length) && length <= DRAIN_MAX_BYTES) {
    req.unpipe();
    req.resume();
    return;
  }
  res.once('finish', () => {
    if (!req.complete) req.socket?.destroy();
  });
}

/**
 * Files of the caller's namespace in the request branch (docs/files.md). Root and team keys see
 * every file of the namespace; a sub key only those it uploaded (another owner's is a 404).
 */
@ApiTags('files')
@Controller('files')
@Auth('root', 'sub', 'team')
export class FilesController {
  constructor(
    private readonly files: FilesService,
    private readonly uploads: FileUploads,
    private readonly contents: FileContents,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}

  /**
   * Uploads a file, streamed to storage: the raw body (its Content-Type is the file's type,
   * `name` its name) or multipart/form-data with one file part (its filename and type). The type
   * must be one media type (`type/subtype`, then `; name=value` parameters): a list, a comma
   * anywhere or a broken parameter is a 400; it is stored normalised (lower-case type and
   * parameter names, parameters in name order). With Content-Length, the quota is checked
   * before a byte is stored. A failed or cut-off upload, or a multipart body that is not
   * well-formed (no closing boundary: 400), leaves nothing behind. An Idempotency-Key names the
   * upload: a retry under it answers the first upload's file without storing the body again.
   */
  @Post()
  @NeedsScope('files:write')
  @HttpCode(HttpStatus.CREATED)
  @ApiConsumes('application/octet-stream', 'multipart/form-data')
  @ApiQuery({
    name: 'name',
    required: false,
    description:
      "The file's name (a raw body without one is named by its id); overrides a multipart filename",
    schema: {
      type: 'string',
      minLength: 1,
      maxLength: 255,
      pattern: '^[^\\u0000-\\u001f\\u007f/\\\\]+$',
    },
  })
  @ApiBody({
    description:
      "The bytes (Content-Type: one media type, the file's), or multipart/form-data with one file part",
    required: true,
    schema: { type: 'string', format: 'binary' },
  })
  @ApiExtension(REQUEST_BODY_CONTENT, {
    'application/octet-stream': { schema: { type: 'string', format: 'binary' } },
    'multipart/form-data': {
      schema: {
        type: 'object',
        properties: {
          file: { type: 'string', format: 'binary', description: 'The one file part' },
        },
        required: ['file'],
        additionalProperties: false,
      },
    },
  })
  @ApiCreatedResponse({ type: FileDto, description: 'Stored; Location names it' })
  @ApiBadRequestResponse({
    type: ProblemDto,
    description:
      'VALIDATION_FAILED: a bad name; a type that is not one media type (a list, a comma, a broken parameter); a multipart body without exactly one file part or not well-formed (no closing boundary)',
  })
  @ApiConflictResponse({
    type: ProblemDto,
    description:
      "FILE_QUOTA_EXCEEDED: the tenant's file bytes would pass FILE_QUOTA_BYTES (no plan); PLAN_LIMIT_EXCEEDED: they would pass its plan's fileBytes. Both with members `limit`, `max`, `usage`, `plan`",
  })
  @ApiPayloadTooLargeResponse({
    type: ProblemDto,
    description: 'PAYLOAD_TOO_LARGE: over FILE_MAX_BYTES',
  })
  async uploadFile(
    @CurrentPrincipal() principal: CustomerPrincipal,
    @Query('name') name: unknown,
    @Req() req: Request,
    // The body streams in: a refused upload's rest is dropped or cut off with the answer.
    @Res({ passthrough: true }) res: Response,
  ): Promise<Reply<FileDto>> {
    if (name !== undefined && typeof name !== 'string')
      throw new ValidationFailedError([{ field: 'name', message: 'must be one string' }]);
    const { maxBytes } = this.config.files;
    const input = await uploadOf(
      req,
      name === undefined ? undefined : checkName(name, 'name'),
      maxBytes,
    );
    let stored;
    try {
      stored = await this.uploads.upload(principal, input);
    } catch (error) {
      leaveBody(req, res);
      if (error instanceof FileTooLargeError) throw new PayloadTooLargeError(maxBytes);
      throw error;
    }
    return Reply.located(`/files/${stored.fileId}`, FileDto.from(stored));
  }

  /** Files in upload order; `Link: <…>; rel="next"` while more follow. */
  @Get()
  @NeedsScope('files:read')
  @ApiKeysetList(FileDto, 'id', FILE_ID.source, 'the files uploaded after that one')
  @ApiQuery({
    name: 'name',
    required: false,
    description: 'Files whose name starts with this',
    schema: { type: 'string', maxLength: 255 },
  })
  @ApiQuery({
    name: 'contentType',
    required: false,
    description:
      'Files of exactly this type, compared as stored: normalised (lower-case type and parameter names, parameters in name order)',
    schema: { type: 'string', maxLength: 255 },
  })
  async listFiles(
    @CurrentPrincipal() principal: CustomerPrincipal,
    @Query() raw: Record<string, unknown>,
    @Req() req: Request,
  ): Promise<Reply<FileDto[]>> {
    const page = parseKeysetPage(raw, {
      limitDefault: this.config.limits.listDefault,
      limitMax: this.config.limits.listMax,
      cursor: { field: 'id', valid: (v) => FILE_ID.test(v), rule: '<file id>' },
      params: { name: filterRule, contentType: filterRule },
      order: 'files are listed in upload order',
    });
    const { name, contentType: given } = page.params;
    // Types are stored normalised: `Image/PNG` finds the files stored as `image/png`.
    const contentType = given === undefined ? undefined : (normalisedMediaType(given) ?? given);
    const { files, more } = await this.files.list(principal, {
      limit: page.limit,
      ...(page.after !== undefined ? { after: page.after } : {}),
      ...(name !== undefined ? { namePrefix: name } : {}),
      ...(contentType !== undefined ? { contentType } : {}),
    });
    const last = files.at(-1);
    return Reply.page(
      files.map((file) => FileDto.from(file)),
      nextPageLink(req, raw, more && last ? { id: last.fileId } : undefined),
    );
  }

  @Get(':id')
  @NeedsScope('files:read')
  @ApiOkResponse({ type: FileDto })
  @FILE_NOT_FOUND
  async getFile(
    @CurrentPrincipal() principal: CustomerPrincipal,
    @Param('id') id: string,
  ): Promise<FileDto> {
    return FileDto.from(await this.files.get(principal, id));
  }

  /**
   * The bytes. One `Range` gets 206 (several get the whole file; 416 when none of it is
   * there); `If-None-Match` with the ETag (the SHA-256) gets 304. `Content-Disposition` is
   * `inline` only for images other than SVG (PNG, JPEG, GIF, WebP, AVIF, BMP), PDF, plain text,
   * audio and video; every other type (HTML, SVG, XML, JavaScript, multipart, anything unknown)
   * comes as an attachment, and a stored type that is not one valid media type as
   * `application/octet-stream`. Always with `X-Content-Type-Options: nosniff` and
   * `Content-Security-Policy: default-src 'none'; sandbox`.
   */
  @Get(':id/content')
  @NeedsScope('files:read')
  @ApiFileContent()
  async downloadFile(
    @CurrentPrincipal() principal: CustomerPrincipal,
    @Param('id') id: string,
    @Req() req: Request,
    @Res() res: Response,
  ): Promise<void> {
    await sendFile(req, res, await this.files.get(principal, id), this.contents);
  }

  /** Deletes the file; its bytes leave the quota before the answer, and its links stop working. */
  @Delete(':id')
  @NeedsScope('files:write')
  @HttpCode(HttpStatus.NO_CONTENT)
  @ApiNoContentResponse({ description: 'Deleted' })
  @FILE_NOT_FOUND
  async deleteFile(
    @CurrentPrincipal() principal: CustomerPrincipal,
    @Param('id') id: string,
  ): Promise<void> {
    await this.files.delete(principal, id);
  }

  /**
   * A link that downloads the file without a key until it expires (at most
   * FILE_LINK_MAX_SECONDS) or the file is deleted: for `<img src>` and downloads in a browser.
   * Anyone holding it can download the file. It names this stored file, not only its id: once
   * the file is deleted or replaced, it never downloads a file stored under the id later.
   */
  @Post(':id/links')
  @NeedsScope('files:write')
  @HttpCode(HttpStatus.CREATED)
  @ApiCreatedResponse({ type: FileLinkDto })
  @ApiBadRequestResponse({
    type: ProblemDto,
    description: 'expiresInSeconds over FILE_LINK_MAX_SECONDS',
  })
  @FILE_NOT_FOUND
  async linkFile(
    @CurrentPrincipal() principal: CustomerPrincipal,
    @Param('id') id: string,
    @Body() body: FileLinkRequestDto,
    @Req() req: Request,
  ): Promise<FileLinkDto> {
    const { token, expiresAt } = await this.files.link(principal, id, body.expiresInSeconds);
    const path = `/file-links/${token}`;
    return {
      url: `${req.protocol}://${req.get('host') ?? 'localhost'}${path}`,
      path,
      expiresAt: expiresAt.toISOString(),
    };
  }
}
