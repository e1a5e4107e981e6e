import busboy from 'busboy';
import type { Request } from 'express';
import { PassThrough, type Readable } from 'node:stream';
import { PayloadTooLargeError, ValidationFailedError } from '../common/errors';
import type { UploadInput } from './file-uploads';
import { MEDIA_TYPE_MAX_LENGTH, normalisedMediaType, UNKNOWN_TYPE } from './media-type';

/** What a file name may be: 1–255 characters, no control characters, no path separators. */
// eslint-disable-next-line no-control-regex -- control characters are what it refuses
const NAME_PATTERN = /^[^\u0000-\u001f\u007f/\\]{1,255}$/;
/** How much more than FILE_MAX_BYTES a multipart body may be: its boundaries and part headers. */
export const MULTIPART_OVERHEAD_BYTES = 64 * 1024;

export function checkName(name: string, field: string): string {
  if (!NAME_PATTERN.test(name))
    throw new ValidationFailedError([
      { field, message: 'must be 1–255 characters without control characters, / or \\' },
    ]);
  return name;
}

/**
 * A file's type as it is stored: one media type, normalised (normalisedMediaType); none given is
 * application/octet-stream. A list, a comma, a broken parameter: 400.
 */
export function checkType(contentType: string | undefined, field: string): string {
  const given = contentType?.trim() ?? '';
  if (given === '') return UNKNOWN_TYPE;
  const type = normalisedMediaType(given);
  if (type === null)
    throw new ValidationFailedError([
      {
        field,
        message: `must be one media type such as image/png or text/plain; charset=utf-8 (type/subtype, then ; name=value parameters; no comma; at most ${MEDIA_TYPE_MAX_LENGTH} characters)`,
      },
    ]);
  return type;
}

function declaredLength(req: Request): number | null {
  const length = req.headers['content-length'];
  return length === undefined ? null : Number(length);
}

/**
 * The file a POST /files carries: the raw body (its Content-Type is the file's, `?name=` its
 * name) or the one file part of a multipart/form-data body (its filename and type, `?name=`
 * overriding the name). Nothing is buffered: the file comes back as a stream.
 */
export function uploadOf(
  req: Request,
  name: string | undefined,
  maxBytes: number,
): Promise<UploadInput> {
  if (!req.is('multipart/form-data')) {
    const length = declaredLength(req);
    if (length !== null && length > maxBytes) throw new PayloadTooLargeError(maxBytes);
    return Promise.resolve({
      name: name === undefined ? null : checkName(name, 'name'),
      contentType: checkType(req.headers['content-type'], 'Content-Type'),
      body: req,
      declaredBytes: length,
    });
  }
  return multipartFile(req, name);
}

/**
 * The one file part of a multipart body, as a stream that ends only when the whole body is read:
 * a second file part, or a body that breaks off, fails it, so the upload stores nothing.
 */
function multipartFile(req: Request, name: string | undefined): Promise<UploadInput> {
  return new Promise((resolve, reject) => {
    let parser: busboy.Busboy;
    try {
      parser = busboy({ headers: req.headers, limits: { files: 1, fields: 20, parts: 21 } });
    } catch (error) {
      reject(
        new ValidationFailedError([
          {
            field: 'Content-Type',
            message: `is not a usable multipart type: ${(error as Error).message}`,
          },
        ]),
      );
      return;
    }
    const file = new PassThrough();
    // Its error may come before the upload pipes it: the pipeline reads it from the stream then.
    file.on('error', () => undefined);
    let found = false;
    const fail = (error: Error) => {
      if (found) file.destroy(error);
      else reject(error);
    };
    // What the parser finds wrong with the body (`Unexpected end of form`: no closing
    // boundary) is the client's: a 400, whether the file part or the parser says it first.
    const malformed = (error: Error) =>
      new ValidationFailedError([
        { field: 'body', message: `is not a well-formed multipart body: ${error.message}` },
      ]);
    parser.on('file', (_field: string, stream: Readable, info: busboy.FileInfo) => {
      try {
        const input: UploadInput = {
          name: checkName(name ?? info.filename ?? '', name !== undefined ? 'name' : 'filename'),
          contentType: checkType(info.mimeType, 'part Content-Type'),
          body: file,
          declaredBytes: declaredLength(req),
        };
        found = true;
        stream.on('error', (error: Error) => file.destroy(malformed(error)));
        stream.pipe(file, { end: false });
        resolve(input);
      } catch (error) {
        stream.resume();
        reject(error instanceof Error ? error : new Error(String(error)));
      }
    });
    parser.on('filesLimit', () =>
      fail(new ValidationFailedError([{ field: 'body', message: 'must carry one file part' }])),
    );
    parser.on('error', (error: Error) => fail(malformed(error)));
    parser.on('close', () => {
      if (found && !file.destroyed) file.end();
      else reject(new ValidationFailedError([{ field: 'body', message: 'has no file part' }]));
    });
    // A client that stops sending: the parser, and with it the file stream, fail too.
    req.once('close', () => {
      if (!req.complete) parser.destroy(new Error('the upload was cut off'));
    });
    req.pipe(parser);
  });
}
