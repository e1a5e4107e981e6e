import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { clean, readResult, summaryTable } from './report';

let dir: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'contract-report-'));
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

function report(overrides: Record<string, unknown> = {}): string {
  const path = join(dir, 'report.json');
  writeFileSync(
    path,
    JSON.stringify({
      schemathesis_version: '4.32.5',
      seed: 7,
      running_time: 1,
      exit_code: 0,
      operations: { selected: 5, tested: 5, errored: 0, skipped: 0 },
      test_cases: { generated: 100, with_failures: 0, unique_failures: 0 },
      failures: [],
      errors: [],
      filtered: 2,
      warnings: { missing_auth: [], missing_test_data: ['GET /x'] },
      ...overrides,
    }),
  );
  return path;
}

describe('a run result', () => {
  it('reads the figures and the exclusions used', () => {
    const log = join(dir, 'excluded.jsonl');
    writeFileSync(
      log,
      '{"exclusion":"a","operation":"GET /x"}\n{"exclusion":"a","operation":"GET /y"}\n{"exclusion":"b","operation":"GET /x"}\n',
    );
    const result = readResult('root', 0, report(), log, 3);
    expect(result).toMatchObject({ tested: 5, selected: 5, cases: 100, failures: 0, errors: 0 });
    expect(result.excluded).toEqual({ a: 2, b: 1 });
    expect(result.warnings).toEqual(['missing_test_data (1)']);
    expect(clean(result)).toBe(true);
  });

  it('is not clean with a failure, an error or a non-zero exit', () => {
    const log = join(dir, 'none.jsonl');
    const failing = readResult(
      'root',
      1,
      report({ test_cases: { generated: 9, with_failures: 1, unique_failures: 1 } }),
      log,
      1,
    );
    expect(clean(failing)).toBe(false);
    expect(clean(readResult('root', 0, report({ errors: [{}] }), log, 1))).toBe(false);
    expect(clean(readResult('root', 1, report(), log, 1))).toBe(false);
  });

  it('counts a missing report as an error, never as a clean run', () => {
    const result = readResult('sub', 0, join(dir, 'missing.json'), join(dir, 'none.jsonl'), 1);
    expect(result.errors).toBe(1);
    expect(clean(result)).toBe(false);
  });

  it('is summed up in the table', () => {
    const table = summaryTable([readResult('team', 0, report(), join(dir, 'none.jsonl'), 2.5)]);
    expect(table).toContain('team');
    expect(table).toMatch(/total\s+5\s+100\s+0\s+0\s+0\s+2\.5 s/);
    expect(table).toContain('clean');
  });
});
