import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative, sep } from 'node:path';

/**
 * The module graph drawn in docs/architecture.md is the graph of the imports:
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
  const readme = readFileSync(join(ROOT, 'docs', 'architecture.md'), 'utf8');
  const block = /<!-- module-graph -->\s*```text\n([\s\S]*?)```/.exec(readme)?.[1];
  if (!block) throw new Error('docs/architecture.md has no module graph block');
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

/**
 * The modules of cross-cutting concerns: each a module of its own, registered once by the
 * composition root, between common and the features (docs/architecture.md, "Architecture").
 */
const CROSS_CUTTING = ['idempotency', 'rate-limit', 'usage'];

const asObject = (graph: Map<string, Set<string>>) =>
  Object.fromEntries([...graph].sort().map(([from, to]) => [from, [...to].sort()]));

describe('module graph', () => {
  it('is the one docs/architecture.md draws', () => {
    expect(asObject(actualGraph())).toEqual(asObject(documentedGraph()));
  });

  it('points down: common and config import no feature module, a cross-cutting module only them, auth no feature', () => {
    const graph = actualGraph();
    const outside = (module: string, allowed: string[]) =>
      [...(graph.get(module) ?? [])].filter((m) => !allowed.includes(m));
    for (const base of ['common', 'config']) expect(outside(base, ['config'])).toEqual([]);
    for (const module of CROSS_CUTTING) {
      expect(graph.has(module)).toBe(true);
      expect(outside(module, ['common', 'config'])).toEqual([]);
    }
    expect(outside('auth', ['common', 'config', ...CROSS_CUTTING])).toEqual([]);
  });
});

/** The file a relative import names: `x.ts`, or `x/index.ts` for a folder. */
function resolveImport(file: string, specifier: string): string | undefined {
  const target = join(file, '..', specifier);
  for (const candidate of [`${target}.ts`, join(target, 'index.ts')]) {
    if (statSync(candidate, { throwIfNoEntry: false })?.isFile()) return candidate;
  }
  return undefined;
}

/** Every file of src (tests aside) with the files of src it imports, `import type` included. */
function fileGraph(): Map<string, string[]> {
  const graph = new Map<string, string[]>();
  for (const file of sourceFiles(SRC)) {
    const text = readFileSync(file, 'utf8');
    const targets = [...text.matchAll(/(?:from|import)\s+'(\.[^']*)'/g)]
      .map((match) => resolveImport(file, match[1] as string))
      .filter((target): target is string => target !== undefined);
    graph.set(file, [...new Set(targets)]);
  }
  return graph;
}

/** The import cycles of a graph, each as the files around it (one per strongly connected set). */
function cycles(graph: Map<string, string[]>): string[][] {
  // Tarjan's strongly connected components: a component of more than one file is a cycle, and
  // so is a file that imports itself.
  let counter = 0;
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const found: string[][] = [];
  const visit = (file: string): void => {
    index.set(file, counter);
    low.set(file, counter);
    counter += 1;
    stack.push(file);
    onStack.add(file);
    for (const next of graph.get(file) ?? []) {
      if (!index.has(next)) {
        visit(next);
        low.set(file, Math.min(low.get(file)!, low.get(next)!));
      } else if (onStack.has(next)) {
        low.set(file, Math.min(low.get(file)!, index.get(next)!));
      }
    }
    if (low.get(file) !== index.get(file)) return;
    const component: string[] = [];
    let member: string;
    do {
      member = stack.pop()!;
      onStack.delete(member);
      component.push(member);
    } while (member !== file);
    if (component.length > 1 || (graph.get(file) ?? []).includes(file)) found.push(component);
  };
  for (const file of graph.keys()) if (!index.has(file)) visit(file);
  return found.map((component) => component.map((f) => relative(ROOT, f)).sort());
}

/** Every .ts file of src, tests included. */
function allSourceFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) return allSourceFiles(path);
    return name.endsWith('.ts') ? [path] : [];
  });
}

/** Lines as an editor numbers them: a final newline ends the last line, it starts none. */
function lineCount(text: string): number {
  const lines = text.split('\n').length;
  return text.endsWith('\n') ? lines - 1 : lines;
}

/**
 * Files are split where their responsibilities part, never to meet a count: a file over this
 * many lines is an outlier worth a look, not a limit to cut code at.
 */
const OUTLIER_LINES = 500;

describe('file sizes', () => {
  it(`flags any file of src over ${OUTLIER_LINES} lines as an outlier worth a look`, () => {
    const long = allSourceFiles(SRC)
      .map((file) => ({
        file: relative(ROOT, file),
        lines: lineCount(readFileSync(file, 'utf8')),
      }))
      .filter(({ lines }) => lines > OUTLIER_LINES);
    expect(long).toEqual([]);
  });
});

describe('file graph', () => {
  it('has no import cycle in src', () => {
    expect(cycles(fileGraph())).toEqual([]);
  });

  it('finds a cycle when there is one', () => {
    const graph = new Map([
      ['/a', ['/b']],
      ['/b', ['/c']],
      ['/c', ['/a']],
      ['/d', ['/a']],
    ]);
    expect(cycles(graph)).toHaveLength(1);
    expect(cycles(graph)[0]).toHaveLength(3);
  });
});
