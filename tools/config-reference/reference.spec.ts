import { readFileSync } from 'node:fs';
import {
  ENV_EXAMPLE,
  generateReference,
  parseEnvExample,
  readVariables,
  REFERENCE,
  REGENERATE,
  renderReference,
  serviceSections,
} from './reference';
import { IsIn, IsInt, IsOptional, Max, Min } from 'class-validator';

const example = parseEnvExample(readFileSync(ENV_EXAMPLE, 'utf8'));

describe('the configuration reference', () => {
  const service = serviceSections();

  it('documents in .env.example every variable the service reads, section by section, and no other', () => {
    const names = (variables: { name: string }[]) => variables.map((v) => v.name).sort();
    expect(example.slice(0, service.length).map((s) => names(s.variables))).toEqual(
      service.map((s) => names(s.variables)),
    );
  });

  it("gives in .env.example each variable's default as the service has it", () => {
    const differing = service.flatMap(({ variables }, index) =>
      variables.flatMap((variable) => {
        const documented = example[index]?.variables.find((v) => v.name === variable.name);
        const written = documented?.value ?? '';
        return written === (variable.default ?? '')
          ? []
          : [`${variable.name}: .env.example ${written}, the service ${variable.default}`];
      }),
    );
    expect(differing).toEqual([]);
  });

  it('gives every variable a meaning in .env.example', () => {
    const unexplained = example.flatMap((s) =>
      s.variables.filter((v) => v.meaning === '').map((v) => v.name),
    );
    expect(unexplained).toEqual([]);
  });

  it(`is docs/configuration.md as generated (else: ${REGENERATE})`, () => {
    expect(readFileSync(REFERENCE, 'utf8')).toBe(generateReference());
  });
});

describe('readVariables and renderReference', () => {
  class Sample {
    /** Bounded. */
    @IsInt()
    @Min(1)
    @Max(10)
    SAMPLE_COUNT = 3;

    @IsOptional()
    @IsIn(['a', 'b'])
    SAMPLE_MODE?: 'a' | 'b';
  }

  it('reads names, defaults and bounds from the class', () => {
    expect(readVariables(Sample)).toEqual([
      { name: 'SAMPLE_COUNT', default: '3', allowed: '1 to 10' },
      { name: 'SAMPLE_MODE', default: undefined, allowed: 'a, b' },
    ]);
  });

  it('parses sections, intros and the comment lines above each variable', () => {
    const parsed = parseEnvExample(
      [
        '# --- One ----',
        '# What the section is.',
        '',
        '# The first,',
        '# on two lines.',
        'FIRST=1',
        'SECOND=',
        '',
        'THIRD=3',
      ].join('\n'),
    );
    expect(parsed).toEqual([
      {
        title: 'One',
        intro: 'What the section is.',
        variables: [
          { name: 'FIRST', value: '1', meaning: 'The first, on two lines.' },
          { name: 'SECOND', value: '', meaning: 'The first, on two lines.' },
          { name: 'THIRD', value: '3', meaning: '' },
        ],
      },
    ]);
  });

  it('escapes table cells', () => {
    const rendered = renderReference([
      ...example.slice(0, serviceSections().length),
      { title: 'Extra', intro: '', variables: [{ name: 'X', value: 'a|b', meaning: 'p | q' }] },
    ]);
    expect(rendered).toContain('| `X` | `a\\|b` | p \\| q |');
  });
});
