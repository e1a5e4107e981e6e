/**
 * A collection's stored JSON Schema, made a set of OpenAPI components: its root and each of its
 * `$defs` become components, and every `$ref` inside it is rewritten to point at them. A pointer
 * such as `#/$defs/Address` means the stored document's root; once the schema sits inside
 * another document, `#` would mean that document's root instead.
 */

/** A JSON Schema as JSON: an object, or `true`/`false`. */
export type JsonSchema = boolean | { [keyword: string]: unknown };

/** Keywords whose value is one subschema. */
const SUBSCHEMA = new Set([
  'additionalProperties',
  'unevaluatedProperties',
  'items',
  'additionalItems',
  'unevaluatedItems',
  'contains',
  'propertyNames',
  'not',
  'if',
  'then',
  'else',
]);
/** Keywords whose value maps names to subschemas. */
const SUBSCHEMA_MAP = new Set(['properties', 'patternProperties', 'dependentSchemas', '$defs']);
/** Keywords whose value is a list of subschemas. */
const SUBSCHEMA_LIST = new Set(['allOf', 'anyOf', 'oneOf', 'prefixItems']);
/** Where the stored root keeps its definitions (`definitions` is the older spelling). */
const DEFINITIONS = ['$defs', 'definitions'] as const;
/** Keywords of the stored document itself, meaningless once it is embedded. */
const DOCUMENT_KEYWORDS = ['$schema', '$id'];

export interface EmbeddedSchema {
  /** The stored root without its definitions, references rewritten. */
  root: JsonSchema;
  /** Its definitions, references rewritten, by component name. */
  defs: Record<string, JsonSchema>;
}

export interface ComponentNames {
  /** The component the stored root becomes. */
  root: string;
  /** The component a definition becomes, unique among the collection's. */
  def(name: string): string;
}

export const isSchemaObject = (value: unknown): value is { [keyword: string]: unknown } =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

const componentRef = (name: string, rest: string[] = []): string =>
  ['#/components/schemas', name, ...rest]
    .map((part, i) => (i === 0 ? part : pointerToken(part)))
    .join('/');

/** A JSON Pointer token in a URI fragment: `~` and `/` escaped, then percent-encoded. */
function pointerToken(token: string): string {
  return encodeURIComponent(token.replace(/~/g, '~0').replace(/\//g, '~1')).replace(/%24/g, '$');
}

/** The tokens of a fragment pointer (`#/a/b~1c` → `['a', 'b/c']`); undefined when it is no pointer. */
function pointerTokens(ref: string): string[] | undefined {
  if (ref === '#') return [];
  if (!ref.startsWith('#/')) return undefined;
  try {
    return decodeURIComponent(ref.slice(2))
      .split('/')
      .map((token) => token.replace(/~1/g, '/').replace(/~0/g, '~'));
  } catch {
    return undefined;
  }
}

/**
 * Embeds a stored schema. A `$ref` that is not a pointer into the stored document (an anchor,
 * another document) is dropped with a `$comment` saying so: the value it described is then
 * typed as any value, never as something narrower than the service accepts.
 */
export function embedSchema(stored: unknown, names: ComponentNames): EmbeddedSchema {
  const defNames = new Map<string, string>();
  const defs: Record<string, JsonSchema> = {};
  const storedDefs: [string, unknown][] = [];
  if (isSchemaObject(stored)) {
    // Definitions first, so that a reference anywhere can name theirs.
    for (const keyword of DEFINITIONS) {
      const map = stored[keyword];
      if (!isSchemaObject(map)) continue;
      for (const [name, schema] of Object.entries(map)) {
        defNames.set(`${keyword}/${name}`, names.def(name));
        storedDefs.push([`${keyword}/${name}`, schema]);
      }
    }
  }

  const rewriteRef = (ref: string): string | undefined => {
    const tokens = pointerTokens(ref);
    if (!tokens) return undefined;
    const [first, second, ...rest] = tokens;
    const def = first !== undefined && second !== undefined && defNames.get(`${first}/${second}`);
    return def ? componentRef(def, rest) : componentRef(names.root, tokens);
  };

  const walk = (schema: unknown): unknown => {
    if (!isSchemaObject(schema)) return schema;
    const out: Record<string, unknown> = {};
    for (const [keyword, value] of Object.entries(schema)) {
      if (keyword === '$ref' && typeof value === 'string') {
        const ref = rewriteRef(value);
        if (ref) out.$ref = ref;
        else out.$comment = `The reference ${value} is not resolved here: any value.`;
      } else if (SUBSCHEMA.has(keyword)) {
        out[keyword] = Array.isArray(value) ? value.map(walk) : walk(value);
      } else if (SUBSCHEMA_MAP.has(keyword) || keyword === 'definitions') {
        out[keyword] = isSchemaObject(value)
          ? Object.fromEntries(Object.entries(value).map(([k, v]) => [k, walk(v)]))
          : value;
      } else if (SUBSCHEMA_LIST.has(keyword)) {
        out[keyword] = Array.isArray(value) ? value.map(walk) : value;
      } else {
        // Data (enum, const, default, examples) and annotations are kept as they are.
        out[keyword] = value;
      }
    }
    return out;
  };

  for (const [key, schema] of storedDefs) {
    const name = defNames.get(key);
    if (name) defs[name] = toSchema(walk(schema));
  }
  let own = stored;
  if (isSchemaObject(stored)) {
    const copy = { ...stored };
    for (const keyword of [...DEFINITIONS, ...DOCUMENT_KEYWORDS]) delete copy[keyword];
    own = copy;
  }
  return { root: toSchema(walk(own)), defs };
}

/** Anything that is not a schema (the service never stores one) is typed as any value. */
const toSchema = (value: unknown): JsonSchema =>
  typeof value === 'boolean' || isSchemaObject(value) ? value : true;

/**
 * A unique component name for each definition: characters that a component name cannot hold
 * become `_`, and a name that two definitions would share gets a number.
 */
export function definitionNamer(prefix: string): (name: string) => string {
  const taken = new Set<string>();
  return (name) => {
    const base = `${prefix}${name.replace(/[^A-Za-z0-9._-]/g, '_') || '_'}`;
    let candidate = base;
    for (let n = 2; taken.has(candidate); n++) candidate = `${base}_${n}`;
    taken.add(candidate);
    return candidate;
  };
}
