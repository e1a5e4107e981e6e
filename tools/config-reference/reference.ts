// The configuration reference (docs/configuration.md), generated from what reads the environment:
// the validated classes of src/config/environment give each variable, its section, its default
// and its bounds; `.env.example` gives what each one means, in the comment lines above it. The
// unit test beside this file fails when the classes and `.env.example` disagree (a variable in one
// and not the other, or another default) or when the reference is not the one generated here, so
// none of the three can drift from the others.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { getMetadataStorage } from 'class-validator';
import { ENVIRONMENT_SECTIONS } from '../../src/config/environment';

export const ROOT = join(__dirname, '..', '..');
export const ENV_EXAMPLE = join(ROOT, '.env.example');
export const REFERENCE = join(ROOT, 'docs', 'configuration-reference.md');
export const REGENERATE = 'npm run config:reference';

/** One variable as `.env.example` documents it. */
export interface ExampleVariable {
  name: string;
  /** The value written after `=` ('' when none). */
  value: string;
  /** The comment lines above it, without `# `, joined with spaces. */
  meaning: string;
}

/** One `# --- Title ---` section of `.env.example`. */
export interface ExampleSection {
  title: string;
  /** The comment lines right under the title, before the first variable's own comment. */
  intro: string;
  variables: ExampleVariable[];
}

const SECTION = /^# -+ (.+?) -*$/;
const VARIABLE = /^([A-Z][A-Z0-9_]*)=(.*)$/;

/**
 * `.env.example` read as sections of variables. A section's comment lines up to its first blank
 * line are its intro when a blank line follows the title block; the comment lines directly above
 * a variable are that variable's meaning, and variables on the lines right after it (no comment
 * between) share it: `PORT` and `HOST` under "HTTP port and bind address."
 */
export function parseEnvExample(text: string): ExampleSection[] {
  const sections: ExampleSection[] = [];
  let comments: string[] = [];
  /** The meaning of the variable on the line above, for a group that shares one comment. */
  let shared: string | undefined;
  for (const line of text.split('\n')) {
    const title = SECTION.exec(line);
    if (title) {
      sections.push({ title: title[1] ?? '', intro: '', variables: [] });
      comments = [];
      shared = undefined;
      continue;
    }
    const section = sections[sections.length - 1];
    if (!section) continue;
    if (line.startsWith('#')) {
      comments.push(line.replace(/^# ?/, ''));
      shared = undefined;
      continue;
    }
    const variable = VARIABLE.exec(line);
    if (variable) {
      const meaning = comments.length > 0 ? comments.join(' ').trim() : (shared ?? '');
      section.variables.push({ name: variable[1] ?? '', value: variable[2] ?? '', meaning });
      shared = meaning;
    } else {
      if (line.trim() === '' && section.variables.length === 0 && comments.length > 0)
        section.intro = comments.join(' ').trim();
      shared = undefined;
    }
    comments = [];
  }
  return sections;
}

/** One variable as the service reads it. */
export interface ReadVariable {
  name: string;
  /** The default, as text; undefined when the variable has none (unset is a state of its own). */
  default: string | undefined;
  /** The bounds its validators set: `1024 to 16777216`, `mongo, memory`, an integer … */
  allowed: string;
}

type SectionClass = new () => object;

/** The variables of one environment class, in declaration order, with defaults and bounds. */
export function readVariables(section: SectionClass): ReadVariable[] {
  const instance = new section() as Record<string, unknown>;
  const metadata = getMetadataStorage().getTargetValidationMetadatas(section, '', true, false);
  const names = [...new Set([...Object.keys(instance), ...metadata.map((m) => m.propertyName)])];
  return names.map((name) => {
    const rules = metadata.filter((m) => m.propertyName === name);
    const constraint = (rule: string): unknown[] | undefined =>
      rules.find((m) => m.name === rule)?.constraints as unknown[] | undefined;
    const parts: string[] = [];
    const min = constraint('min')?.[0];
    const max = constraint('max')?.[0];
    if (min !== undefined && max !== undefined) parts.push(`${number(min)} to ${number(max)}`);
    else if (min !== undefined) parts.push(`at least ${number(min)}`);
    else if (max !== undefined) parts.push(`at most ${number(max)}`);
    const choices = constraint('isIn')?.[0];
    if (Array.isArray(choices)) parts.push(choices.map(String).join(', '));
    if (rules.some((m) => m.name === 'isInt') && parts.length === 0) parts.push('an integer');
    const value = instance[name];
    return {
      name,
      default: value === undefined ? undefined : textOf(value),
      allowed: parts.join('; '),
    };
  });
}

function number(value: unknown): string {
  return typeof value === 'number' ? value.toLocaleString('en-US') : String(value);
}

function textOf(value: unknown): string {
  if (Array.isArray(value)) return value.map(String).join(',');
  if (typeof value === 'object' && value !== null) return JSON.stringify(value);
  return String(value);
}

/** Every section the service reads, in the order `.env.example` documents them. */
export function serviceSections(): { key: string; variables: ReadVariable[] }[] {
  return Object.entries(ENVIRONMENT_SECTIONS).map(([key, section]) => ({
    key,
    variables: readVariables(section as SectionClass),
  }));
}

const cell = (text: string): string => text.replace(/\|/g, '\\|');
const code = (text: string): string => (text === '' ? '' : `\`${text.replace(/`/g, "'")}\``);

/**
 * docs/configuration.md: one table per section, every variable with its default, its bounds and
 * its meaning, then the development database's variables (read by tools/dev-database, not by the
 * service).
 */
export function renderReference(example: ExampleSection[]): string {
  const service = serviceSections();
  const lines = [
    '# Configuration reference',
    '',
    '<!-- Generated by `' +
      REGENERATE +
      '` from src/config/environment and .env.example; edit those, not this file. -->',
    '',
    'Every environment variable the service reads, by section, in the order of',
    '[.env.example](../.env.example). **Default** is what an unset (or empty) variable means;',
    '**Allowed** is what validation at boot accepts beyond the type (a value outside it stops the',
    'process with every problem listed). Only [src/config](../src/config) reads `process.env`.',
    '',
  ];
  service.forEach(({ variables }, index) => {
    const documented = example[index];
    lines.push(`## ${documented?.title ?? `Section ${index + 1}`}`, '');
    if (documented?.intro) lines.push(documented.intro, '');
    lines.push('| Variable | Default | Allowed | Meaning |', '| --- | --- | --- | --- |');
    for (const variable of variables) {
      const meaning = documented?.variables.find((v) => v.name === variable.name)?.meaning ?? '';
      lines.push(
        `| \`${variable.name}\` | ${cell(code(variable.default ?? ''))} | ${cell(variable.allowed)} | ${cell(meaning)} |`,
      );
    }
    lines.push('');
  });
  for (const extra of example.slice(service.length)) {
    lines.push(`## ${extra.title}`, '');
    if (extra.intro) lines.push(extra.intro, '');
    lines.push('| Variable | Default | Meaning |', '| --- | --- | --- |');
    for (const variable of extra.variables)
      lines.push(
        `| \`${variable.name}\` | ${cell(code(variable.value))} | ${cell(variable.meaning)} |`,
      );
    lines.push('');
  }
  return `${lines.join('\n').trimEnd()}\n`;
}

/** The reference as it should be now. */
export function generateReference(): string {
  return renderReference(parseEnvExample(readFileSync(ENV_EXAMPLE, 'utf8')));
}
