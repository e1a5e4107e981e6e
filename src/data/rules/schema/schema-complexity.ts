import { RE2JS } from 're2js';
import { isPlainObject } from '../../../common/json';
import {
  IN_PLACE_KEYWORDS,
  SCHEMA_KEYWORDS,
  SCHEMA_LIST_KEYWORDS,
  SCHEMA_MAP_KEYWORDS,
} from './schema-document';
import { SchemaTooComplexError } from './schema.errors';

/**
 * What a collection schema costs, measured before Ajv compiles it: the schema nodes it applies
 * with every `$ref` expanded where it stands, and the size of each pattern's RE2 program. Ajv's
 * compiled code and its checking of one value grow with the first (a `$ref` is code inlined or
 * called at each place that names it), a pattern's run with the second: bounding both bounds
 * what one schema can make an instance do, whatever the item (SCHEMA_TOO_COMPLEX beyond).
 */

export interface ComplexityLimits {
  /** SCHEMA_MAX_EXPANDED_NODES */
  maxExpandedNodes: number;
  /** SCHEMA_PATTERN_MAX_PROGRAM */
  maxPatternProgram: number;
  /** DATA_MAX_DEPTH: no item is deeper, so a schema that refers to itself expands no further. */
  maxDataDepth: number;
}

/** The references followed since the last step down the item: a cycle among them never ends. */
interface RefChain {
  target: unknown;
  ref: string;
  previous: RefChain | null;
}

interface Step {
  node: unknown;
  at: string;
  dataDepth: number;
  refs: RefChain | null;
}

/** Refuses (SchemaTooComplexError) a schema beyond the limits; `schema` passed checkSchemaDocument. */
export function checkSchemaComplexity(
  schema: Record<string, unknown>,
  limits: ComplexityLimits,
): void {
  const anchors = anchorsOf(schema);
  const patterns = new Set<string>();
  const pending: Step[] = [{ node: schema, at: 'schema', dataDepth: 0, refs: null }];
  let applied = 0;
  for (let step = pending.pop(); step; step = pending.pop()) {
    applied += 1;
    if (applied > limits.maxExpandedNodes)
      throw new SchemaTooComplexError(
        'SCHEMA_MAX_EXPANDED_NODES',
        `applies more than ${limits.maxExpandedNodes} schema nodes with every $ref expanded where it stands (reached at ${step.at})`,
      );
    const { node, at, dataDepth, refs } = step;
    if (!isPlainObject(node)) continue;
    const here = (keyword: string, child: unknown, down: boolean, name?: string | number) => {
      if (down && dataDepth >= limits.maxDataDepth) return;
      pending.push({
        node: child,
        at: name === undefined ? `${at}.${keyword}` : `${at}.${keyword}.${name}`,
        dataDepth: down ? dataDepth + 1 : dataDepth,
        refs: down ? null : refs,
      });
    };
    for (const [keyword, value] of Object.entries(node)) {
      const down = !IN_PLACE_KEYWORDS.has(keyword);
      if (SCHEMA_KEYWORDS.has(keyword)) here(keyword, value, down);
      else if (SCHEMA_LIST_KEYWORDS.has(keyword) && Array.isArray(value))
        value.forEach((child, i) => here(keyword, child, down, i));
      // $defs are reached through the references to them, once per reference.
      else if (SCHEMA_MAP_KEYWORDS.has(keyword) && keyword !== '$defs' && isPlainObject(value))
        for (const [name, child] of Object.entries(value)) {
          if (keyword === 'patternProperties') patterns.add(name);
          here(keyword, child, down, name);
        }
      else if (keyword === 'pattern' && typeof value === 'string') patterns.add(value);
      else if (keyword === '$ref' && typeof value === 'string') {
        const target = resolve(schema, anchors, value);
        if (target === undefined) continue; // Ajv refuses it when compiling
        for (let seen = refs; seen; seen = seen.previous)
          if (seen.target === target)
            throw new SchemaTooComplexError(
              'SCHEMA_MAX_EXPANDED_NODES',
              `refers to itself without going down into the item (${at}.$ref '${value}'), which never ends`,
            );
        pending.push({
          node: target,
          at: `${at}.$ref(${value})`,
          dataDepth,
          refs: { target, ref: value, previous: refs },
        });
      }
    }
  }
  for (const pattern of patterns) checkProgram(pattern, limits.maxPatternProgram);
}

/** Instructions of the RE2 program of a pattern (one that compiles: schema-document.ts checked). */
export function patternProgramSize(pattern: string): number {
  const program = (RE2JS.compile(pattern).re2Input as { prog?: { numInst?: () => number } }).prog;
  // re2js keeps its program on the compiled expression; a version that did not would count as its text.
  return typeof program?.numInst === 'function' ? program.numInst() : pattern.length;
}

function checkProgram(pattern: string, max: number): void {
  const size = patternProgramSize(pattern);
  if (size > max)
    throw new SchemaTooComplexError(
      'SCHEMA_PATTERN_MAX_PROGRAM',
      `the pattern ${JSON.stringify(pattern.length > 60 ? `${pattern.slice(0, 60)}…` : pattern)} compiles to ${size} RE2 instructions, more than ${max}`,
    );
}

/** `$anchor` names of the document, to the schema that declares each. */
function anchorsOf(schema: unknown): Map<string, unknown> {
  const anchors = new Map<string, unknown>();
  const pending: unknown[] = [schema];
  for (let node = pending.pop(); node !== undefined; node = pending.pop()) {
    if (Array.isArray(node)) pending.push(...(node as unknown[]));
    else if (isPlainObject(node)) {
      if (typeof node.$anchor === 'string' && !anchors.has(node.$anchor))
        anchors.set(node.$anchor, node);
      pending.push(...Object.values(node));
    }
  }
  return anchors;
}

/** The schema a `#…` reference names: a JSON Pointer (RFC 6901, URI-encoded) or an anchor. */
function resolve(root: unknown, anchors: Map<string, unknown>, ref: string): unknown {
  let fragment: string;
  try {
    fragment = decodeURIComponent(ref.slice(1));
  } catch {
    return undefined;
  }
  if (fragment !== '' && !fragment.startsWith('/')) return anchors.get(fragment);
  let node: unknown = root;
  for (const raw of fragment.split('/').slice(1)) {
    const token = raw.replace(/~1/g, '/').replace(/~0/g, '~');
    if (Array.isArray(node) && /^(0|[1-9][0-9]*)$/.test(token)) node = node[Number(token)];
    else if (isPlainObject(node) && Object.prototype.hasOwnProperty.call(node, token))
      node = node[token];
    else return undefined;
  }
  return node;
}
