import fc from 'fast-check';
import { normalisedMediaType, presentationOf } from './media-type';

/** Content-Types made of the pieces a hostile one is made of: types, separators, quotes, escapes. */
const pieces = fc.constantFrom(
  'text/plain',
  'text/html',
  'TEXT/HTML',
  'image/png',
  'image/svg+xml',
  'application/xhtml+xml',
  'video/mp4',
  'audio/x+xml',
  'a',
  'charset',
  'utf-8',
  ';',
  ',',
  '=',
  '"',
  '\\',
  ' ',
  '\t',
  '/',
);
const contentTypes = fc.array(pieces, { maxLength: 12 }).map((parts) => parts.join(''));

describe('media types', () => {
  it('normalises to one media type without a comma, which normalises to itself', () => {
    let accepted = 0;
    fc.assert(
      fc.property(contentTypes, (sent) => {
        const type = normalisedMediaType(sent);
        if (type === null) return;
        accepted += 1;
        expect(type).not.toContain(',');
        expect(type).toMatch(/^[a-z0-9!#$%&'*+.^_`|~-]+\/[a-z0-9!#$%&'*+.^_`|~-]+(; |$)/);
        expect(normalisedMediaType(type)).toBe(type);
      }),
      { seed: 44, numRuns: 5000 },
    );
    // The property is about accepted types: enough of them were made.
    expect(accepted).toBeGreaterThan(200);
  });

  it('serves inline only a normalised type of the list, and anything unreadable as octet-stream', () => {
    fc.assert(
      fc.property(contentTypes, (stored) => {
        const { type, disposition } = presentationOf(stored);
        expect(type).not.toContain(',');
        if (normalisedMediaType(stored) === null)
          expect({ type, disposition }).toEqual({
            type: 'application/octet-stream',
            disposition: 'attachment',
          });
        if (disposition === 'inline')
          expect(type.split(';')[0]).toMatch(
            /^(image\/(png|jpeg|gif|webp|avif|bmp)|text\/plain|application\/pdf|(audio|video)\/[a-z0-9.-]+)$/,
          );
      }),
      { seed: 44, numRuns: 5000 },
    );
    expect(presentationOf('text/plain;,text/html')).toEqual({
      type: 'application/octet-stream',
      disposition: 'attachment',
    });
    expect(presentationOf('IMAGE/PNG')).toEqual({ type: 'image/png', disposition: 'inline' });
    expect(presentationOf('image/svg+xml').disposition).toBe('attachment');
    expect(presentationOf('audio/x+xml').disposition).toBe('attachment');
  });
});
