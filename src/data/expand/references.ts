/**
 * The references at an expansion's path in an item as JSON: the value there is a string id or an
 * array of string ids; one array of objects on the way is crossed (`lines.product`: each line's
 * `product`). Anything else — a number, null, an object, an array holding anything but strings,
 * a second array on the way — is no reference and stays as it is.
 */

const isObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

const isIdArray = (value: unknown): value is string[] =>
  Array.isArray(value) && value.every((each) => typeof each === 'string');

/**
 * `item` with every reference at `path` replaced by `replace(id)` (the item copied along the
 * path; untouched values are shared).
 */
export function withReferences(
  item: Record<string, unknown>,
  path: string,
  replace: (id: string) => unknown,
): Record<string, unknown> {
  return visit(item, path.split('.'), false, (value) => {
    if (typeof value === 'string') return replace(value);
    if (isIdArray(value)) return value.map(replace);
    return value;
  }) as Record<string, unknown>;
}

/** The ids at `path` in `item`, in order, repeats included. */
export function referenceIds(item: Record<string, unknown>, path: string): string[] {
  const ids: string[] = [];
  visit(item, path.split('.'), false, (value) => {
    if (typeof value === 'string') ids.push(value);
    else if (isIdArray(value)) ids.push(...value);
    return value;
  });
  return ids;
}

function visit(
  value: Record<string, unknown>,
  [head, ...rest]: string[],
  crossed: boolean,
  onValue: (value: unknown) => unknown,
): unknown {
  if (head === undefined || !Object.hasOwn(value, head)) return value;
  const inner = value[head];
  let next: unknown;
  if (rest.length === 0) next = onValue(inner);
  else if (isObject(inner)) next = visit(inner, rest, crossed, onValue);
  else if (Array.isArray(inner) && !crossed)
    next = (inner as unknown[]).map((element): unknown =>
      isObject(element) ? visit(element, rest, true, onValue) : element,
    );
  else return value;
  return next === inner ? value : { ...value, [head]: next };
}
