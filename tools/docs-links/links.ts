// Relative links in the README and docs/: every file a link names exists, and every `#anchor`
// names a heading of its page, slugged as GitHub renders it.
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';

export const ROOT = join(__dirname, '..', '..');

/** The Markdown pages checked: the README, every page under docs/, and the client's README. */
export function markdownPages(root = ROOT): string[] {
  const docs = join(root, 'docs');
  const pages = readdirSync(docs, { recursive: true })
    .map((name) => join(docs, String(name)))
    .filter((path) => path.endsWith('.md'));
  return [join(root, 'README.md'), ...pages, join(root, 'client', 'README.md')].filter((path) =>
    existsSync(path),
  );
}

/** The text of a page outside fenced code blocks and inline code, where links are links. */
export function proseOf(markdown: string): string {
  let inFence = false;
  return markdown
    .split('\n')
    .map((line) => {
      if (/^\s*(```|~~~)/.test(line)) {
        inFence = !inFence;
        return '';
      }
      return inFence ? '' : line.replace(/`[^`]*`/g, '');
    })
    .join('\n');
}

/** GitHub's anchor of a heading: lower-cased, punctuation dropped, spaces as hyphens. */
export function slugOf(heading: string): string {
  const text = heading
    .replace(/!?\[([^\]]*)\]\([^)]*\)/g, '$1')
    .replace(/[`*]/g, '')
    .replace(/<[^>]+>/g, '')
    .trim()
    .toLowerCase();
  return text.replace(/[^\p{L}\p{M}\p{N}\p{Pc} -]/gu, '').replace(/ /g, '-');
}

/** Every anchor a page offers: its headings' slugs (repeats numbered) and explicit ids. */
export function anchorsOf(markdown: string): Set<string> {
  const anchors = new Set<string>();
  const seen = new Map<string, number>();
  let inFence = false;
  for (const line of markdown.split('\n')) {
    if (/^\s*(```|~~~)/.test(line)) inFence = !inFence;
    if (inFence) continue;
    const heading = /^#{1,6}\s+(.+?)\s*#*\s*$/.exec(line);
    if (heading) {
      const slug = slugOf(heading[1] ?? '');
      const count = seen.get(slug) ?? 0;
      anchors.add(count === 0 ? slug : `${slug}-${count}`);
      seen.set(slug, count + 1);
    }
    for (const id of line.matchAll(/<a\s+(?:id|name)="([^"]+)"/g)) anchors.add(id[1] ?? '');
  }
  return anchors;
}

/** A link that leads nowhere: the page, the link, and why. */
export interface BrokenLink {
  page: string;
  target: string;
  problem: string;
}

/** The relative links of `pages` whose file or anchor does not exist. */
export function brokenLinks(pages: string[], root = ROOT): BrokenLink[] {
  const anchors = new Map<string, Set<string>>();
  const anchorsAt = (path: string) => {
    let found = anchors.get(path);
    if (!found) {
      found = anchorsOf(readFileSync(path, 'utf8'));
      anchors.set(path, found);
    }
    return found;
  };
  const broken: BrokenLink[] = [];
  for (const page of pages) {
    const prose = proseOf(readFileSync(page, 'utf8'));
    for (const link of prose.matchAll(/\]\(([^)\s]+)(?:\s+"[^"]*")?\)/g)) {
      const target = link[1] ?? '';
      if (/^[a-z][a-z0-9+.-]*:/i.test(target)) continue;
      const [path = '', anchor] = target.split('#');
      const file = path === '' ? page : resolve(dirname(page), decodeURI(path));
      const name = relative(root, page);
      // A link out of the repository (the contract beside it, ../shared/SPEC.md) depends on
      // where the reader checked it out: not checked here.
      if (relative(root, file).startsWith('..')) continue;
      if (!existsSync(file)) {
        broken.push({ page: name, target, problem: 'no such file' });
        continue;
      }
      if (anchor === undefined || anchor === '') continue;
      if (statSync(file).isDirectory() || !file.endsWith('.md')) {
        if (!/^L\d+(-L\d+)?$/.test(anchor))
          broken.push({ page: name, target, problem: 'an anchor into a file that is not a page' });
        continue;
      }
      if (!anchorsAt(file).has(decodeURIComponent(anchor)))
        broken.push({ page: name, target, problem: 'no heading with that anchor' });
    }
  }
  return broken;
}
