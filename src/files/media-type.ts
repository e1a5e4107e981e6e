import { format, parse } from 'content-type';

/** The type a file is stored as when an upload names none, and served as when its type is unusable. */
export const UNKNOWN_TYPE = 'application/octet-stream';
/** The longest media type a file may have. */
export const MEDIA_TYPE_MAX_LENGTH = 255;

/** Printable ASCII, space and tab: what a media type may be written with. */
const PRINTABLE = /^[\x20-\x7e\t]*$/;

/**
 * Exactly one media type as RFC 9110 writes it (`type/subtype`, then `; name=value` parameters,
 * the value a token or a quoted string), normalised: type, subtype and parameter names in lower
 * case, parameters in name order, values quoted only where they must be. Null for anything else:
 * a list of types, a comma anywhere (quoted ones too: a browser splits a Content-Type at its
 * commas and takes the last type), a parameter without `=value`, a character outside printable
 * ASCII, or more than MEDIA_TYPE_MAX_LENGTH characters. Parsed by `content-type`, the parser
 * Express itself uses.
 */
export function normalisedMediaType(text: string): string | null {
  if (text.length > MEDIA_TYPE_MAX_LENGTH || text.includes(',') || !PRINTABLE.test(text))
    return null;
  let normalised: string;
  try {
    normalised = format(parse(text));
  } catch {
    return null;
  }
  return normalised.length <= MEDIA_TYPE_MAX_LENGTH && !normalised.includes(',')
    ? normalised
    : null;
}

/**
 * Types a browser shows in place without running anything or reading them as a document:
 * images other than SVG, PDF, plain text, audio and video (without a `+suffix`: a `…+xml` or
 * `…+json` type is XML or JSON by its suffix, not media, and XML can carry a page). Every other
 * type — HTML, SVG, XML, JavaScript, multipart, anything unknown — is sent as an attachment.
 */
const INLINE_TYPES = [
  /^image\/(png|jpeg|gif|webp|avif|bmp)$/,
  /^text\/plain$/,
  /^application\/pdf$/,
  /^(audio|video)\/[a-z0-9.-]+$/,
];

/**
 * How a stored file is served: its type normalised (UNKNOWN_TYPE when what is stored is not one
 * valid media type — a file stored before types were checked), and `inline` only when that
 * type, without its parameters, is on the short list above.
 */
export function presentationOf(stored: string): {
  type: string;
  disposition: 'inline' | 'attachment';
} {
  const type = normalisedMediaType(stored);
  if (type === null) return { type: UNKNOWN_TYPE, disposition: 'attachment' };
  const essence = type.split(';')[0] ?? '';
  return {
    type,
    disposition: INLINE_TYPES.some((pattern) => pattern.test(essence)) ? 'inline' : 'attachment',
  };
}
