import type { FieldError } from '../errors';
import { isPlainObject, serializedSize, type JsonObject } from './json';

/**
 * The rules of the JSON validator (json-validator.ts) and the walk that applies them: one pass
 * over a value, with a layer of rules over all of it and, for a request body, a layer of its own
 * over each free-form member, each layer with its own counters, budget and problems.
 */

export interface JsonBudget {
  /** Nesting depth of objects and arrays; the value itself is level `rootDepth`. */
  maxDepth: number;
  /** Keys plus values, every node of the tree; beyond it the walk ends. */
  maxNodes?: number;
  /** Characters of all keys and strings together; beyond it the walk ends. */
  maxChars?: number;
  /** Keys of any one object; beyond it the walk ends. */
  maxKeys?: number;
  /** UTF-8 bytes of the JSON text, measured once nothing else is wrong. */
  maxBytes?: number;
}

export interface JsonRules {
  /** Why an object key is refused, or null. The value under a refused key is still checked. */
  key(key: string): string | null;
  /** Why a value below the root is refused, or null; accepted arrays and plain objects are walked. */
  value(value: unknown): string | null;
  budget: JsonBudget;
  /** 'object' (default): the value must be a JSON object. 'any': a request body of any shape. */
  root?: 'object' | 'any';
  /** Level of the value itself: 1 (default), or 0 for a request body whose members are level 1. */
  rootDepth?: number;
  /** 'dotted' (default): `a.b[0]`. 'quoted': `a["b.c"]` for keys that would read ambiguously. */
  paths?: 'dotted' | 'quoted';
  /** Problems listed at most (default: all). */
  maxErrors?: number;
  /** Wording of the depth overrun, which is reported once and skips what lies below. */
  tooDeep?: (maxDepth: number) => string;
  /**
   * false: only check, and answer the value itself (not branded as guarded), for a caller that
   * hands it to a stricter guard which copies it anyway. Default true.
   */
  copy?: boolean;
}

declare const guardedBrand: unique symbol;
/** A value produced by the validator: checked and copied. */
export type Guarded<T> = T & { readonly [guardedBrand]: true };

export type JsonCheck = { ok: true; value: unknown } | { ok: false; errors: FieldError[] };

const guardedValues = new WeakSet<object>();

/** Whether an object was produced by the validator. */
export function isGuarded(value: unknown): boolean {
  return typeof value === 'object' && value !== null && guardedValues.has(value);
}

/**
 * The rules of one free-form member of a request body (a data item, values, a filter), applied
 * in the same walk as the body's own (checkBody), with their own budget and problems.
 */
export interface MemberRules {
  rules: JsonRules;
  /** Where the member's problems are named; its own name by default. */
  path?: string;
  /** The member is an array whose elements are checked one by one, each with its own budget. */
  each?: boolean;
}

const SIMPLE_KEY = /^[A-Za-z0-9_-]+$/;

function memberPath(parent: string, key: string, style: JsonRules['paths']): string {
  if (style === 'quoted' && !SIMPLE_KEY.test(key)) return `${parent}[${JSON.stringify(key)}]`;
  return parent === '' ? key : `${parent}.${key}`;
}

function itemPath(parent: string, index: number): string {
  return parent === '' ? String(index) : `${parent}[${index}]`;
}

/**
 * An object member of a copy (an array's items are stored directly). Assigning `__proto__` would
 * set the copy's prototype; rules refuse it, this keeps copies safe.
 */
function setMember(target: JsonObject | unknown[], key: string, value: unknown): void {
  if (key === '__proto__') {
    Object.defineProperty(target, key, {
      value,
      enumerable: true,
      writable: true,
      configurable: true,
    });
  } else {
    (target as Record<string, unknown>)[key] = value;
  }
}

/** A value the walk does not enter: anything but an array or a plain object. */
function isLeaf(value: unknown): boolean {
  return (
    typeof value !== 'object' || value === null || (!Array.isArray(value) && !isPlainObject(value))
  );
}

type Target = JsonObject | unknown[] | null;

/** What a layer answers for a node it does not walk into (refused, too deep, over budget). */
const SKIP = Symbol('skip');

/** Where free-form members begin below a node: its own members, or its elements. */
type Starts =
  | { kind: 'members'; rules: ReadonlyMap<string, MemberRules | null> }
  | { kind: 'elements'; rules: MemberRules; name: string; slots: Slot[] };

/** A member's (or an element's) result: a layer still walking, or a leaf's check. */
export type Slot = Layer | JsonCheck;

interface Frame {
  source: unknown;
  /** A string for object members, whose key is checked too. */
  key: string | number;
  /** The frame of the enclosing value: paths are built from this chain, only for a problem. */
  parent: Frame | null;
  /** Level in the outer layer (the body's). */
  depth: number;
  /** Where the outer copy goes; null below a refused key (checked, not copied) or when checking. */
  target: Target;
  /** A free-form member: the outer layer hands it on as sent (or as its layer's check). */
  sent: boolean;
  /** The member layer walking this node, and where its copy goes. */
  layer: Layer | null;
  layerTarget: Target;
  starts: Starts | null;
}

/**
 * One set of rules over part of a walk, with its own counters, budget and problems: the outer
 * layer over the whole value, a member layer over a free-form member. Each sees exactly the
 * steps, in the same order, that a walk of its part alone would take.
 */
export class Layer {
  private readonly maxDepth: number;
  private readonly maxNodes: number;
  private readonly maxChars: number;
  private readonly maxKeys: number;
  private readonly maxErrors: number;
  readonly copying: boolean;
  private nodes = 0;
  private chars = 0;
  private tooDeep = false;
  private readonly errors: FieldError[] = [];
  /** A node, character or key-count overrun: it ends this layer's walk and is reported alone. */
  private overrun: FieldError | null = null;
  readonly holder: unknown[] = [];

  constructor(
    private readonly rules: JsonRules,
    /** Where problems of the whole value are reported ('' for a request body: 'body'). */
    private readonly path: string,
    /** The frame of the layer's own value. */
    readonly root: Frame,
    /** Outer depth minus this layer's depth. */
    private readonly depthOffset: number,
  ) {
    const { maxDepth, maxNodes, maxChars, maxKeys } = rules.budget;
    this.maxDepth = maxDepth;
    this.maxNodes = maxNodes ?? Infinity;
    this.maxChars = maxChars ?? Infinity;
    this.maxKeys = maxKeys ?? Infinity;
    this.maxErrors = rules.maxErrors ?? Infinity;
    this.copying = rules.copy !== false;
    if ((rules.root ?? 'object') === 'object' && !isPlainObject(root.source))
      this.fail(this.whole(), 'must be a JSON object');
  }

  /** Whether the layer still takes steps: no overrun, and fewer problems than it lists. */
  get walking(): boolean {
    return this.overrun === null && this.errors.length < this.maxErrors;
  }

  get failed(): boolean {
    return this.overrun !== null || this.errors.length > 0;
  }

  private whole(): string {
    return this.path === '' ? 'body' : this.path;
  }

  private fail(field: string, message: string): typeof SKIP {
    this.overrun = { field, message };
    return SKIP;
  }

  /** The path of a node of this layer's value, as its problems name it. */
  pathOf(frame: Frame): string {
    const keys: Array<string | number> = [];
    for (let at: Frame | null = frame; at !== null && at !== this.root; at = at.parent)
      keys.push(at.key);
    let path = this.path;
    for (let i = keys.length - 1; i >= 0; i -= 1) {
      const key = keys[i] as string | number;
      path =
        typeof key === 'string' ? memberPath(path, key, this.rules.paths) : itemPath(path, key);
    }
    return path;
  }

  /**
   * The steps at one node: its key, its count, its value, its depth and key count; then the copy
   * of a container (null when nothing is copied) into which its children go, or SKIP where the
   * layer does not walk in. `sent`: the node is left as it is (copied by no one here).
   */
  enter(frame: Frame, target: Target, keys: string[] | null, sent: boolean): Target | typeof SKIP {
    const { source } = frame;
    const isRoot = frame === this.root;
    const key = isRoot ? 0 : frame.key;
    if (typeof key === 'string') {
      this.nodes += 1;
      this.chars += key.length;
      const problem = this.rules.key(key);
      if (problem !== null) {
        this.errors.push({ field: this.pathOf(frame), message: problem });
        target = null;
      }
    }
    this.nodes += 1;
    if (this.nodes > this.maxNodes)
      return this.fail(this.whole(), `has more than ${this.maxNodes} values and keys`);
    if (!isRoot) {
      const problem = this.rules.value(source);
      if (problem !== null) {
        this.errors.push({ field: this.pathOf(frame), message: problem });
        return SKIP;
      }
    }
    let copy: Target = null;
    const array = Array.isArray(source);
    if (array || keys !== null) {
      if (frame.depth - this.depthOffset > this.maxDepth) {
        if (!this.tooDeep) {
          const message =
            this.rules.tooDeep?.(this.maxDepth) ?? `is nested deeper than ${this.maxDepth} levels`;
          this.errors.push({ field: this.pathOf(frame), message });
        }
        this.tooDeep = true;
        return SKIP;
      }
      if (keys !== null && keys.length > this.maxKeys)
        return this.fail(this.pathOf(frame), `has more than ${this.maxKeys} fields`);
      // Nothing is allocated where nothing is copied (only checking, or below a refused key).
      if (target !== null && !sent) copy = array ? new Array<unknown>(source.length) : {};
    } else if (typeof source === 'string') {
      this.chars += source.length;
    }
    if (this.chars > this.maxChars)
      return this.fail(this.whole(), `has more than ${this.maxChars} characters`);
    if (target === null) return copy;
    const value = sent || copy === null ? source : copy;
    if (typeof key === 'number') (target as unknown[])[key] = value;
    else setMember(target, key, value);
    return copy;
  }

  /** The steps of a leaf member of a container, as its own frame would take them. */
  leaf(container: Frame, into: Target, member: string | number, leaf: unknown): void {
    let target = into;
    if (typeof member === 'string') {
      this.nodes += 1;
      this.chars += member.length;
      const problem = this.rules.key(member);
      if (problem !== null) {
        this.errors.push({ field: this.leafPath(container, member), message: problem });
        target = null;
      }
    }
    this.nodes += 1;
    if (this.nodes > this.maxNodes) {
      this.fail(this.whole(), `has more than ${this.maxNodes} values and keys`);
      return;
    }
    const problem = this.rules.value(leaf);
    if (problem !== null) {
      this.errors.push({ field: this.leafPath(container, member), message: problem });
      return;
    }
    if (typeof leaf === 'string') this.chars += leaf.length;
    if (this.chars > this.maxChars) {
      this.fail(this.whole(), `has more than ${this.maxChars} characters`);
      return;
    }
    if (target === null) return;
    // An array's index is never `__proto__`: stored directly.
    if (typeof member === 'number') (target as unknown[])[member] = leaf;
    else setMember(target, member, leaf);
  }

  private leafPath(container: Frame, member: string | number): string {
    const at = this.pathOf(container);
    return typeof member === 'string'
      ? memberPath(at, member, this.rules.paths)
      : itemPath(at, member);
  }

  /** The layer's answer once the walk is over. */
  result(): JsonCheck {
    if (this.overrun !== null) return { ok: false, errors: [this.overrun] };
    if (this.errors.length > 0) return { ok: false, errors: this.errors.slice(0, this.maxErrors) };
    const checked = this.copying ? this.holder[0] : this.root.source;
    const { maxBytes } = this.rules.budget;
    if (maxBytes !== undefined) {
      const size = serializedSize(checked);
      if (size > maxBytes) {
        return {
          ok: false,
          errors: [
            {
              field: this.whole(),
              message: `is ${size} bytes serialized; the limit is ${maxBytes}`,
            },
          ],
        };
      }
    }
    if (this.copying && typeof checked === 'object' && checked !== null) guardedValues.add(checked);
    return { ok: true, value: checked };
  }
}

/** The layer or check of a free-form member (or element) beginning at `child`, if it has rules. */
function startMember(child: Frame, starts: Starts): Slot | null {
  let rules: MemberRules;
  let path: string;
  if (starts.kind === 'members') {
    const member = starts.rules.get(child.key as string);
    if (member === undefined) return null;
    // Free-form members go on as sent, or as their own rules' check.
    child.sent = true;
    const { source } = child;
    if (member === null || source === undefined || source === null) return null;
    if (member.each) {
      if (Array.isArray(source)) {
        const slots = new Array<Slot>(source.length);
        child.starts = { kind: 'elements', rules: member, name: child.key as string, slots };
      }
      return null;
    }
    rules = member;
    path = member.path ?? (child.key as string);
  } else {
    rules = starts.rules;
    path = starts.rules.path ?? itemPath(starts.name, child.key as number);
  }
  if (isLeaf(child.source)) return walk(child.source, rules.rules, path, null).outer.result();
  const layer = new Layer(rules.rules, path, child, child.depth - (rules.rules.rootDepth ?? 1));
  child.layer = layer;
  child.layerTarget = layer.copying ? layer.holder : null;
  return layer;
}

/** A frame of a node below `parent`. */
function frameOf(
  parent: Frame,
  source: unknown,
  key: string | number,
  target: Target,
  layer: Layer | null,
  layerTarget: Target,
): Frame {
  return {
    source,
    key,
    parent,
    depth: parent.depth + 1,
    target,
    sent: false,
    layer,
    layerTarget,
    starts: null,
  };
}

/**
 * The walk: the outer layer over all of `value`, and a layer of its own over each free-form
 * member that `members` names (at the root's members). Iterative (an explicit stack, so hostile
 * nesting cannot exhaust the call stack), in document order, every node visited once.
 */
export function walk(
  value: unknown,
  rules: JsonRules,
  path: string,
  members: ReadonlyMap<string, MemberRules | null> | null,
): { outer: Layer; slots: Map<string, Slot | Slot[]> } {
  const root: Frame = {
    source: value,
    key: 0,
    parent: null,
    depth: rules.rootDepth ?? 1,
    target: null,
    sent: false,
    layer: null,
    layerTarget: null,
    starts: members === null ? null : { kind: 'members', rules: members },
  };
  const outer = new Layer(rules, path, root, 0);
  root.target = outer.copying ? outer.holder : null;
  const slots = new Map<string, Slot | Slot[]>();
  const start = (child: Frame, starts: Starts): void => {
    const slot = startMember(child, starts);
    if (starts.kind === 'elements') {
      if (slot !== null) starts.slots[child.key as number] = slot;
    } else if (child.starts?.kind === 'elements') {
      slots.set(child.key as string, child.starts.slots);
    } else if (slot !== null) slots.set(child.key as string, slot);
  };
  if (!outer.walking) return { outer, slots };
  // Children are pushed in reverse, so they are popped (and copied) in document order.
  const stack: Frame[] = [root];

  while (stack.length > 0 && outer.walking) {
    const frame = stack.pop() as Frame;
    const { source } = frame;
    const keys = isPlainObject(source) ? Object.keys(source) : null;
    const copy = outer.enter(frame, frame.target, keys, frame.sent);
    if (copy === SKIP) continue;
    let { layer } = frame;
    let layerCopy: Target = null;
    if (layer !== null) {
      const entered = layer.walking ? layer.enter(frame, frame.layerTarget, keys, false) : SKIP;
      if (entered === SKIP) layer = null;
      else layerCopy = entered;
    }
    if (keys === null && !Array.isArray(source)) continue;
    const { starts } = frame;
    const array = keys === null ? (source as unknown[]) : null;
    const object = source as JsonObject;
    const count = array === null ? (keys as string[]).length : array.length;
    const leaves =
      array === null ? (keys as string[]).every((key) => isLeaf(object[key])) : array.every(isLeaf);

    if (!leaves) {
      for (let i = count - 1; i >= 0; i -= 1) {
        const key = array === null ? ((keys as string[])[i] as string) : i;
        const child = frameOf(
          frame,
          array === null ? object[key] : array[i],
          key,
          copy,
          layer,
          layerCopy,
        );
        if (starts !== null) start(child, starts);
        stack.push(child);
      }
      continue;
    }
    /**
     * A container that holds leaves only (a long array of numbers, say) has them checked right
     * here, just as their frames would be next, but without a frame or a path for each.
     */
    for (let i = 0; i < count && outer.walking; i += 1) {
      const member = array === null ? ((keys as string[])[i] as string) : i;
      const leaf = array === null ? object[member] : array[i];
      outer.leaf(frame, copy, member, leaf);
      if (layer?.walking === true) layer.leaf(frame, layerCopy, member, leaf);
      if (starts !== null) start(frameOf(frame, leaf, member, null, null, null), starts);
    }
  }
  return { outer, slots };
}
