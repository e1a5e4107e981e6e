import { mkdtempSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { anchorsOf, brokenLinks, markdownPages, proseOf, ROOT, slugOf } from './links';

describe('links in the README and docs/', () => {
  it('lead to files that exist and to headings that exist', () => {
    expect(brokenLinks(markdownPages())).toEqual([]);
  });

  it('include, on the docs index, a link to every page under docs/', () => {
    const index = join(ROOT, 'docs', 'README.md');
    const linked = new Set(
      [...proseOf(readFileSync(index, 'utf8')).matchAll(/\]\(([^)#\s]+)/g)].map((m) => m[1]),
    );
    const pages = readdirSync(join(ROOT, 'docs')).filter(
      (name) => name.endsWith('.md') && name !== 'README.md',
    );
    expect(pages.filter((page) => !linked.has(page))).toEqual([]);
  });
});

describe('the link check', () => {
  it('slugs headings as GitHub does', () => {
    expect(slugOf('Where the database comes from')).toBe('where-the-database-comes-from');
    expect(slugOf('Why NestJS 11 and not 12')).toBe('why-nestjs-11-and-not-12');
    expect(slugOf('`Idempotency-Key` and retries')).toBe('idempotency-key-and-retries');
    expect(slugOf('Plans, limits & usage (per tenant)')).toBe('plans-limits--usage-per-tenant');
    expect(slugOf('Searching with `q`: words_and_prefixes')).toBe(
      'searching-with-q-words_and_prefixes',
    );
  });

  it('numbers repeated headings', () => {
    expect([...anchorsOf('# A\n## B\n## B\n```\n# not a heading\n```\n')]).toEqual([
      'a',
      'b',
      'b-1',
    ]);
  });

  it('finds a missing file, a missing anchor, and ignores code, absolute links and links out of the repository', () => {
    const root = mkdtempSync(join(tmpdir(), 'links-'));
    mkdirSync(join(root, 'docs'));
    writeFileSync(join(root, 'docs', 'a.md'), '# Alpha\n\n## Second part\n');
    writeFileSync(
      join(root, 'README.md'),
      [
        '[ok](docs/a.md#second-part) [ok too](#top) [web](https://example.com/x#y)',
        '[gone](docs/b.md) [wrong anchor](docs/a.md#third-part) [beside](../elsewhere/SPEC.md)',
        '`[in code](docs/none.md)`',
        '```',
        '[in a block](docs/none.md)',
        '```',
        '# Top',
      ].join('\n'),
    );
    expect(brokenLinks(markdownPages(root), root)).toEqual([
      { page: 'README.md', target: 'docs/b.md', problem: 'no such file' },
      { page: 'README.md', target: 'docs/a.md#third-part', problem: 'no heading with that anchor' },
    ]);
  });
});
