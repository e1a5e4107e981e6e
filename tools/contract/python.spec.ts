import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { meetsMinimum, pinnedVersion, venvName } from './python';

const requirements = readFileSync(join(__dirname, 'requirements.txt'), 'utf8');

describe('the pinned Schemathesis', () => {
  it('is read from the one schemathesis== line of requirements.txt', () => {
    expect(pinnedVersion(requirements)).toMatch(/^\d+\.\d+\.\d+$/);
    expect(requirements.match(/^schemathesis==/gm)).toHaveLength(1);
  });

  it('pins every dependency, so that the seed replays the same run', () => {
    const lines = requirements.split('\n').filter((line) => line && !line.startsWith('#'));
    expect(lines.length).toBeGreaterThan(1);
    for (const line of lines) expect(line).toMatch(/^[A-Za-z0-9_.-]+==\S+$/);
  });

  it('refuses a requirements file without the pin', () => {
    expect(() => pinnedVersion('hypothesis==6.0.0\n')).toThrow(/schemathesis==/);
  });

  it('gets an environment of its own per pinned set and Python minor version', () => {
    const py312 = { executable: '/x/python3.12', version: '3.12.1', via: 'test' };
    const py313 = { executable: '/x/python3.13', version: '3.13.0', via: 'test' };
    const name = venvName(requirements, py312);
    expect(name).toMatch(/^schemathesis-\d+\.\d+\.\d+-py3\.12-[0-9a-f]{12}$/);
    expect(venvName(requirements, { ...py312, version: '3.12.9' })).toBe(name);
    expect(venvName(requirements, py313)).not.toBe(name);
    expect(venvName(`${requirements}\n# changed\n`, py312)).not.toBe(name);
  });
});

describe('the interpreter version check', () => {
  it.each([
    ['3.11.7', false],
    ['3.12.0', true],
    ['3.13.0', true],
    ['4.0.0', true],
    ['2.7.18', false],
  ])('%s meets the minimum: %s', (version, meets) => {
    expect(meetsMinimum(version)).toBe(meets);
  });
});
