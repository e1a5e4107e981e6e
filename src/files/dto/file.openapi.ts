import { applyDecorators } from '@nestjs/common';
import { ApiHeader, ApiNotFoundResponse, ApiResponse } from '@nestjs/swagger';
import { ProblemDto } from '../../common/errors';

const BYTES = { '*/*': { schema: { type: 'string', format: 'binary' } } };
const DOWNLOAD_HEADERS = {
  ETag: { description: 'The SHA-256 of the bytes, quoted (strong)', schema: { type: 'string' } },
  'Content-Disposition': {
    description:
      '`inline` only for image/png, jpeg, gif, webp, avif, bmp, text/plain, application/pdf, audio/* and video/* (no `+suffix`); `attachment` for every other type. With the name (RFC 6266)',
    schema: { type: 'string' },
  },
  'X-Content-Type-Options': { schema: { type: 'string', enum: ['nosniff'] } },
  'Content-Security-Policy': {
    description: "`default-src 'none'; sandbox`: opened as a page anyway, the file runs nothing",
    schema: { type: 'string' },
  },
  'Accept-Ranges': { schema: { type: 'string', enum: ['bytes'] } },
};

/** A download's answers: 200, 206, 304, 404 and 416, and the headers that steer them. */
export function ApiFileContent(): MethodDecorator {
  return applyDecorators(
    ApiHeader({
      name: 'Range',
      required: false,
      description: 'One byte range: `bytes=0-99`, `bytes=100-`, `bytes=-100`',
    }),
    ApiHeader({
      name: 'If-None-Match',
      required: false,
      description: 'The ETag held: 304 when unchanged',
    }),
    ApiHeader({
      name: 'If-Range',
      required: false,
      description: 'The ETag held: the range only if it still names the bytes',
    }),
    ApiResponse({
      status: 200,
      description:
        "The whole file. Content-Type: the file's type, normalised (`application/octet-stream` when what is stored is not one valid media type)",
      content: BYTES,
      headers: DOWNLOAD_HEADERS,
    }),
    ApiResponse({
      status: 206,
      description: 'The range asked for',
      content: BYTES,
      headers: { ...DOWNLOAD_HEADERS, 'Content-Range': { schema: { type: 'string' } } },
    }),
    ApiResponse({
      status: 304,
      description: 'If-None-Match names the ETag',
      headers: { ETag: DOWNLOAD_HEADERS.ETag },
    }),
    ApiNotFoundResponse({ type: ProblemDto, description: 'FILE_NOT_FOUND' }),
    ApiResponse({
      status: 416,
      type: ProblemDto,
      description: 'RANGE_NOT_SATISFIABLE: `Content-Range: bytes */<size>` says the size',
      headers: { ETag: DOWNLOAD_HEADERS.ETag, 'Content-Range': { schema: { type: 'string' } } },
    }),
  );
}
