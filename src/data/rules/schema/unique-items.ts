import type { ErrorObject, FuncKeywordDefinition } from 'ajv/dist/types';

/** The keyword's function: Ajv reads the errors of a failed check from its `errors`. */
type Check = ((unique: boolean, data: unknown[]) => boolean) & {
  errors?: Partial<ErrorObject>[];
};

/**
 * `uniqueItems` in time O(n log n) in the array's size: each element is written once as
 * canonical JSON (members in code-point order) and looked up in a map, where Ajv's own keyword
 * compares every pair of elements whose type it cannot narrow (quadratic: 90,000 numbers held an
 * instance for seconds). JSON equality is the schema's: `1` and `1.0` are one number, and two
 * objects with the same members in another order are equal.
 */
export const uniqueItemsKeyword: FuncKeywordDefinition = {
  keyword: 'uniqueItems',
  type: 'array',
  schemaType: 'boolean',
  errors: true,
  validate: function uniqueItems(unique: boolean, data: unknown[]): boolean {
    const self = uniqueItems as Check;
    self.errors = [];
    if (!unique) return true;
    // Numbers and strings (what an array of thousands mostly holds) as themselves, the rest as
    // canonical JSON: `1` and `1.0` are one number in JSON and in a Map.
    const numbers = new Map<number, number>();
    const strings = new Map<string, number>();
    const others = new Map<string, number>();
    for (let j = 0; j < data.length; j += 1) {
      const value = data[j];
      const i =
        typeof value === 'number'
          ? firstOf(numbers, value, j)
          : typeof value === 'string'
            ? firstOf(strings, value, j)
            : firstOf(others, canonical(value), j);
      if (i !== undefined) {
        self.errors = [
          {
            keyword: 'uniqueItems',
            params: { i, j },
            message: `must NOT have duplicate items (items ## ${i} and ${j} are identical)`,
          },
        ];
        return false;
      }
    }
    return true;
  } as FuncKeywordDefinition['validate'],
};

/** The index `key` was seen at first, after noting it at `index` if it is new. */
function firstOf<K>(seen: Map<K, number>, key: K, index: number): number | undefined {
  const first = seen.get(key);
  if (first === undefined) seen.set(key, index);
  return first;
}

/** The JSON text of a value with every object's members in code-point order of their names. */
export function canonical(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonical).join(',')}]`;
  if (value !== null && typeof value === 'object') {
    const entries = Object.entries(value as Record<string, unknown>)
      .filter(([, member]) => member !== undefined)
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return `{${entries.map(([name, member]) => `${JSON.stringify(name)}:${canonical(member)}`).join(',')}}`;
  }
  return JSON.stringify(value) ?? 'null';
}
