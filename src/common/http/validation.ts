import { applyDecorators, ValidationPipe, type ArgumentMetadata, type Type } from '@nestjs/common';
import { Transform } from 'class-transformer';
import type { ValidationError } from 'class-validator';
import { ValidationFailedError, type FieldError } from '../errors';
import {
  checkJson,
  guardJson,
  isPlainObject,
  JSON_CONSTRAINT,
  jsonProblemsOf,
  requestJsonRules,
  type JsonBudget,
  type JsonObject,
  type JsonRules,
} from '../json';

function flatten(errors: ValidationError[], parent = ''): FieldError[] {
  const prefix = (field: string): string => (parent ? `${parent}.${field}` : field);
  return errors.flatMap((error) => {
    const field = prefix(error.property);
    const own = Object.entries(error.constraints ?? {}).flatMap(([name, message]) =>
      name === JSON_CONSTRAINT
        ? jsonProblemsOf(error.target, error.property).map((p) => ({
            ...p,
            field: prefix(p.field),
          }))
        : [{ field, message }],
    );
    return [...own, ...flatten(error.children ?? [], field)];
  });
}

type BodyShape =
  | { kind: 'object' }
  | { kind: 'absent-allowed' }
  | { kind: 'array'; item: Type<object>; maxItems: number; tooMany: string };

const bodyShapes = new WeakMap<object, BodyShape>();

/**
 * The body is required. Any body that is sent must be a JSON object (the pipe would otherwise
 * validate `null` as `{}`, and an array as an object without properties); with this decorator a
 * missing body is refused too.
 */
export function JsonObjectBody(): ClassDecorator {
  return (target) => {
    bodyShapes.set(target, { kind: 'object' });
  };
}

/**
 * The body may be left out, and then means something of its own: the handler gets `undefined`
 * instead of an empty DTO (DELETE /data/{c} without a body drops the collection). A body that is
 * sent is validated as usual, so a sent body never falls back to the bodiless meaning.
 */
export function AbsentBodyAllowed(): ClassDecorator {
  return (target) => {
    bodyShapes.set(target, { kind: 'absent-allowed' });
  };
}

/**
 * The body is a JSON array of at most `maxItems` `item` DTOs, each validated like a body of its
 * own; problems are listed with the item's index (`0.planName`). The decorated class only names
 * the route's body type (extend Array<item>); the pipe hands on an array of `item` instances.
 */
export function JsonArrayBody(
  item: Type<object>,
  options: { maxItems: number; tooMany: string },
): ClassDecorator {
  return (target) => {
    bodyShapes.set(target, { kind: 'array', item, ...options });
  };
}

/** The free-form members of each DTO class (by prototype; inherited ones are found up the chain). */
const freeFormMembers = new WeakMap<object, string[]>();

/**
 * A free-form JSON member of a request body (a data item, values, a filter), checked and read by
 * its module's own rules. The pipe checks it with the rest of the body (prototype keys, nesting,
 * size) and hands it on as sent; class-transformer and class-validator never walk it (on a large
 * item that walk held the event loop for tens of milliseconds). They see a stand-in of the same
 * presence instead, so the member's own decorators may only ask whether it is there:
 * `IsDefined`, `OptionalField` (null stays null, a value is never absent).
 */
export function FreeFormMember(): PropertyDecorator {
  return applyDecorators(
    (target: object, key: string | symbol) => {
      if (typeof key !== 'string') return;
      freeFormMembers.set(target, [...(freeFormMembers.get(target) ?? []), key]);
    },
    // The stand-in as class-transformer leaves it (the pipe puts the member back afterwards).
    Transform(({ obj, key }) => (obj as Record<string, unknown>)[key]),
  );
}

function freeFormMembersOf(metatype: Type<unknown>): string[] {
  const members: string[] = [];
  for (
    let proto: object | null = metatype.prototype as object;
    proto !== null && proto !== Object.prototype;
    proto = Object.getPrototypeOf(proto) as object | null
  )
    members.push(...(freeFormMembers.get(proto) ?? []));
  return members;
}

/** What class-transformer and class-validator see of a free-form member that is sent. */
const FREE_FORM_STAND_IN = true;

/**
 * Nest's ValidationPipe silently deletes `__proto__`, `constructor` and `prototype` keys,
 * recursively, before validating. This one first checks every validated body and query with the
 * JSON validator instead (prototype keys refused with a 400, nesting and size within the budget)
 * and hands its guarded copy on, so class-transformer's recursive copy never meets hostile
 * input. It also knows the body shapes above, and lists every offending field as problem
 * `errors`, including the nested problems of JsonMember properties.
 */
class StrictValidationPipe extends ValidationPipe {
  private readonly requestRules: JsonRules;
  /** The same rules, checking without copying (free-form members: their own guard copies them). */
  private readonly checkOnlyRules: JsonRules;

  constructor(budget: JsonBudget) {
    super({
      whitelist: true,
      forbidNonWhitelisted: true,
      transform: true,
      // The target is where JsonMember leaves its problems (see flatten).
      validationError: { target: true, value: false },
      exceptionFactory: (errors) => new ValidationFailedError(flatten(errors)),
    });
    this.requestRules = requestJsonRules(budget);
    this.checkOnlyRules = { ...this.requestRules, copy: false };
  }

  override async transform(value: unknown, metadata: ArgumentMetadata): Promise<unknown> {
    if (!metadata.metatype || !this.toValidate(metadata)) return super.transform(value, metadata);
    const shape = metadata.type === 'body' ? bodyShapes.get(metadata.metatype) : undefined;
    if (shape?.kind === 'absent-allowed' && value === undefined) return undefined;
    const guarded =
      shape?.kind === 'array'
        ? guardJson(value, this.requestRules, '')
        : this.guardBody(value, freeFormMembersOf(metadata.metatype));
    if (shape?.kind === 'array') return this.transformArray(guarded, shape);
    // A body the client sent (even `null`) must be an object; only an absent body is left out.
    const sent = metadata.type === 'body' && value !== undefined;
    if ((shape?.kind === 'object' || sent) && !isPlainObject(guarded)) {
      throw new ValidationFailedError([{ field: '', message: 'the body must be a JSON object' }]);
    }
    return this.transformObject(guarded, metadata);
  }

  /**
   * The request guard over a value: one walk checks all of it, in document order as always;
   * the copy handed on leaves out the free-form members, which go on as sent (the data guard,
   * stricter, copies them, so an item of 90,000 numbers is copied once, not twice).
   */
  private guardBody(value: unknown, members: string[]): unknown {
    if (members.length === 0 || !isPlainObject(value))
      return guardJson(value, this.requestRules, '');
    const checked = checkJson(value, this.checkOnlyRules, '');
    if (!checked.ok) throw new ValidationFailedError(checked.errors);
    // Within the budget as a part of a body within it; prototype keys are refused above.
    const rest = guardJson(
      Object.fromEntries(Object.entries(value).filter(([key]) => !members.includes(key))),
      this.requestRules,
      '',
    ) as JsonObject;
    const body: JsonObject = {};
    for (const key of Object.keys(value))
      body[key] = members.includes(key) ? value[key] : rest[key];
    return body;
  }

  /**
   * Nest's transform and validation of a guarded value, with its free-form members taken out
   * (stand-ins of the same presence) and put back, as sent, into the DTO made of it.
   */
  private async transformObject(guarded: unknown, metadata: ArgumentMetadata): Promise<unknown> {
    const members = metadata.metatype ? freeFormMembersOf(metadata.metatype) : [];
    if (members.length === 0 || !isPlainObject(guarded)) return super.transform(guarded, metadata);
    // The guarded value is the request guard's own object: it can lend its members.
    const lent = new Map<string, unknown>();
    for (const member of members) {
      if (!Object.hasOwn(guarded, member)) continue;
      const value = guarded[member];
      if (value === undefined || value === null) continue;
      lent.set(member, value);
      guarded[member] = FREE_FORM_STAND_IN;
    }
    const dto = (await super.transform(guarded, metadata)) as Record<string, unknown>;
    for (const [member, value] of lent) dto[member] = value;
    return dto;
  }

  /** transform() has refused prototype keys already, and hands on a copy without them. */
  protected override stripProtoKeys(): void {}

  private async transformArray(
    body: unknown,
    shape: Extract<BodyShape, { kind: 'array' }>,
  ): Promise<object[]> {
    if (!Array.isArray(body)) {
      throw new ValidationFailedError([{ field: '', message: 'the body must be a JSON array' }]);
    }
    if (body.length > shape.maxItems) {
      throw new ValidationFailedError([{ field: '', message: shape.tooMany }]);
    }
    const items: object[] = [];
    const errors: FieldError[] = [];
    for (const [index, item] of body.entries()) {
      if (!isPlainObject(item)) {
        errors.push({ field: String(index), message: 'must be a JSON object' });
        continue;
      }
      try {
        items.push(
          (await this.transformObject(item, { type: 'body', metatype: shape.item })) as object,
        );
      } catch (error) {
        if (!(error instanceof ValidationFailedError)) throw error;
        for (const e of error.errors ?? []) errors.push({ ...e, field: `${index}.${e.field}` });
      }
    }
    if (errors.length > 0) throw new ValidationFailedError(errors);
    return items;
  }
}

/**
 * The default budget: the data API's nesting limit, and a node count (keys and values) twice the
 * data guard's, so that this first look never refuses a body the data guard would accept.
 */
export const DEFAULT_RAW_JSON_BUDGET: JsonBudget = { maxDepth: 20, maxNodes: 200_000 };

/** A ValidationPipe whose failures list every offending field as problem `errors`. */
export function createValidationPipe(budget: JsonBudget): ValidationPipe {
  return new StrictValidationPipe(budget);
}
