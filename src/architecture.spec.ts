import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative, sep } from 'node:path';

/**
 * The module graph drawn in the README's "Architecture" section is the graph of the imports:
 * this test reads both and compares them, so neither can drift from the other.
 */
const ROOT = join(__dirname, '..');
const SRC = join(ROOT, 'src');

function sourceFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) return sourceFiles(path);
    return name.endsWith('.ts') && !name.endsWith('.spec.ts') ? [path] : [];
  });
}

/** The top-level part of src a file belongs to: a module folder, or `app` for src/*.ts. */
function moduleOf(file: string): string {
  const [first, ...rest] = relative(SRC, file).split(sep);
  return rest.length === 0 ? 'app' : (first as string);
}

function actualGraph(): Map<string, Set<string>> {
  const graph = new Map<string, Set<string>>();
  for (const file of sourceFiles(SRC)) {
    const from = moduleOf(file);
    const uses = graph.get(from) ?? new Set<string>();
    graph.set(from, uses);
    const text = readFileSync(file, 'utf8');
    for (const match of text.matchAll(/from '(\.[^']*)'/g)) {
      const target = join(file, '..', match[1] as string);
      if (!target.startsWith(SRC + sep)) continue;
      const [first, ...rest] = relative(SRC, target).split(sep);
      // `../auth` names the auth folder (its index); `./app.setup` a file of the root.
      const isFolder =
        rest.length > 0 || statSync(target, { throwIfNoEntry: false })?.isDirectory();
      const to = isFolder ? (first as string) : 'app';
      if (to !== from) uses.add(to);
    }
  }
  return graph;
}

function documentedGraph(): Map<string, Set<string>> {
  const readme = readFileSync(join(ROOT, 'README.md'), 'utf8');
  const block = /<!-- module-graph -->\s*```text\n([\s\S]*?)```/.exec(readme)?.[1];
  if (!block) throw new Error('README.md has no module graph block');
  const graph = new Map<string, Set<string>>();
  for (const line of block.split('\n').filter((l) => l.trim() !== '')) {
    const [from, to = ''] = line.split('→').map((part) => part.trim());
    graph.set(
      from as string,
      new Set(to.split(/\s+/).filter((m) => m !== '' && m !== '(nothing)')),
    );
  }
  return graph;
}

const asObject = (graph: Map<string, Set<string>>) =>
  Object.fromEntries([...graph].sort().map(([from, to]) => [from, [...to].sort()]));

describe('module graph', () => {
  it('is the one the README draws', () => {
    expect(asObject(actualGraph())).toEqual(asObject(documentedGraph()));
  });

  it('points down: common and config import no feature module, auth no other feature', () => {
    const graph = actualGraph();
    for (const base of ['common', 'config']) {
      expect([...(graph.get(base) ?? [])].filter((m) => m !== 'config')).toEqual([]);
    }
    expect([...(graph.get('auth') ?? [])].sort()).toEqual(['common', 'config']);
  });
});
