import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { ERROR_CATALOG, ERROR_TABLES, type ErrorCode } from './error-catalog';

const ROOT = join(__dirname, '..');

function sourceFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) return sourceFiles(path);
    return name.endsWith('.ts') && !name.endsWith('.spec.ts') ? [path] : [];
  });
}

describe('error catalog', () => {
  it('holds every entry of every module table under its code, and no other', () => {
    const entries = Object.values(ERROR_TABLES).flatMap((table) => Object.values(table));
    for (const entry of entries) {
      // The very entry: of a code two modules define, the catalog can hold only one.
      expect(ERROR_CATALOG[entry.code as ErrorCode]).toBe(entry);
    }
    expect(Object.keys(ERROR_CATALOG).sort()).toEqual(entries.map(({ code }) => code).sort());
  });

  it('gathers every table a module defines', () => {
    const defined = sourceFiles(join(ROOT, 'src')).flatMap((file) =>
      [...readFileSync(file, 'utf8').matchAll(/export const (\w+) = defineErrors\(/g)].map(
        (match) => match[1],
      ),
    );
    expect(defined.sort()).toEqual(Object.keys(ERROR_TABLES).sort());
  });

  it('keeps the order, statuses and titles the committed OpenAPI document publishes', () => {
    const document = JSON.parse(readFileSync(join(ROOT, 'client/openapi.json'), 'utf8')) as {
      components: { schemas: { ProblemDto: { properties: { code: { enum: string[] } } } } };
    };
    expect(Object.keys(ERROR_CATALOG)).toEqual(
      document.components.schemas.ProblemDto.properties.code.enum,
    );
    // Every example problem of the document: its code's status and title.
    const published = new Map<string, { status: unknown; title: unknown }>();
    const visit = (node: unknown): void => {
      if (typeof node !== 'object' || node === null) return;
      const value = node as Record<string, unknown>;
      if (typeof value.code === 'string' && typeof value.type === 'string' && 'title' in value) {
        published.set(value.code, { status: value.status, title: value.title });
      }
      for (const child of Object.values(value)) visit(child);
    };
    visit(document);
    expect(published.size).toBeGreaterThan(40);
    for (const [code, { status, title }] of published) {
      const entry = ERROR_CATALOG[code as ErrorCode];
      expect({ code, status, title }).toEqual({ code, status: entry.status, title: entry.title });
    }
  });
});
