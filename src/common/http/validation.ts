import { applyDecorators, ValidationPipe, type ArgumentMetadata, type Type } from '@nestjs/common';
import { Transform } from 'class-transformer';
import type { ValidationError } from 'class-validator';
import { ValidationFailedError, type FieldError } from '../errors';
import type { AppConfig } from '../../config';
import {
  checkBody,
  guardJson,
  isPlainObject,
  JSON_CONSTRAINT,
  jsonProblemsOf,
  requestJsonRules,
  type JsonBudget,
  type JsonRules,
  type MemberRules,
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

/**
 * A free-form member's own rules, given to FreeFormMember by the module that reads the member:
 * the pipe applies them in the walk that checks the body (one walk for both) and hands on their
 * CheckedJson, which the module reads where it would have checked the member itself.
 */
export interface FreeFormRules {
  /** The rules under the configured limits (the pipe asks once per DTO class). */
  of(limits: AppConfig['limits']): JsonRules;
  /** Where the member's problems are named; its own name by default. */
  path?: string;
  /** The member is an array whose elements are checked one by one, each with its own budget. */
  each?: boolean;
}

interface FreeFormEntry {
  name: string;
  /** null: no rules of its own; the member goes on as sent, for its module to check. */
  rules: FreeFormRules | null;
}

/** Class metadata: the free-form members of a DTO class, inherited ones included. */
const FREE_FORM_MEMBERS = 'validation:freeFormMembers';

/**
 * A free-form JSON member of a request body (a data item, values, a filter), checked and read by
 * its module's own rules. The pipe checks it with the rest of the body (prototype keys, nesting,
 * size) and, in the same walk, with `rules`: it hands on their CheckedJson (without rules: the
 * member as sent). class-transformer and class-validator never walk it (on a large item that
 * walk held the event loop for tens of milliseconds). They see a stand-in of the same presence
 * instead, so the member's own decorators may only ask whether it is there: `IsDefined`,
 * `OptionalField` (null stays null, a value is never absent).
 */
export function FreeFormMember(rules: FreeFormRules | null = null): PropertyDecorator {
  return applyDecorators(
    (target: object, key: string | symbol) => {
      if (typeof key !== 'string') return;
      const members = (Reflect.getMetadata(FREE_FORM_MEMBERS, target) ?? []) as FreeFormEntry[];
      Reflect.defineMetadata(
        FREE_FORM_MEMBERS,
        [...members.filter((member) => member.name !== key), { name: key, rules }],
        target,
      );
    },
    // The stand-in as class-transformer leaves it (the pipe puts the member back afterwards).
    Transform(({ obj, key }) => (obj as Record<string, unknown>)[key]),
  );
}

function freeFormMembersOf(metatype: Type<unknown>): FreeFormEntry[] {
  return (Reflect.getMetadata(FREE_FORM_MEMBERS, metatype.prototype as object) ??
    []) as FreeFormEntry[];
}

/** What class-transformer and class-validator see of a free-form member that is sent. */
const FREE_FORM_STAND_IN = true;

/**
 * Nest's ValidationPipe silently deletes `__proto__`, `constructor` and `prototype` keys,
 * recursively, before validating. This one first checks every validated body and query with the
 * JSON validator instead (prototype keys refused with a 400, nesting and size within the budget),
 * in the same walk each free-form member with its own rules, and hands its guarded copy on, so
 * class-transformer's recursive copy never meets hostile input. It also knows the body shapes
 * above, and lists every offending field as problem `errors`, including the nested problems of
 * JsonMember properties.
 */
class StrictValidationPipe extends ValidationPipe {
  private readonly requestRules: JsonRules;
  /** Each DTO class's free-form members with their rules under the limits (class metadata). */
  private readonly memberRules = new Map<Type<unknown>, ReadonlyMap<string, MemberRules | null>>();

  constructor(
    budget: JsonBudget,
    /** The limits free-form members' rules follow; without them, members go on as sent. */
    private readonly limits?: AppConfig['limits'],
  ) {
    super({
      whitelist: true,
      forbidNonWhitelisted: true,
      transform: true,
      // The target is where JsonMember leaves its problems (see flatten).
      validationError: { target: true, value: false },
      exceptionFactory: (errors) => new ValidationFailedError(flatten(errors)),
    });
    this.requestRules = requestJsonRules(budget);
  }

  override async transform(value: unknown, metadata: ArgumentMetadata): Promise<unknown> {
    if (!metadata.metatype || !this.toValidate(metadata)) return super.transform(value, metadata);
    const shape = metadata.type === 'body' ? bodyShapes.get(metadata.metatype) : undefined;
    if (shape?.kind === 'absent-allowed' && value === undefined) return undefined;
    const guarded =
      shape?.kind === 'array'
        ? guardJson(value, this.requestRules, '')
        : this.guardBody(value, this.membersOf(metadata.metatype));
    if (shape?.kind === 'array') return this.transformArray(guarded, shape);
    // A body the client sent (even `null`) must be an object; only an absent body is left out.
    const sent = metadata.type === 'body' && value !== undefined;
    if ((shape?.kind === 'object' || sent) && !isPlainObject(guarded)) {
      throw new ValidationFailedError([{ field: '', message: 'the body must be a JSON object' }]);
    }
    return this.transformObject(guarded, metadata);
  }

  private membersOf(metatype: Type<unknown>): ReadonlyMap<string, MemberRules | null> {
    let members = this.memberRules.get(metatype);
    if (members === undefined) {
      const { limits } = this;
      members = new Map(
        freeFormMembersOf(metatype).map(({ name, rules }) => [
          name,
          rules === null || limits === undefined
            ? null
            : { rules: rules.of(limits), path: rules.path, each: rules.each },
        ]),
      );
      this.memberRules.set(metatype, members);
    }
    return members;
  }

  /**
   * The request guard over a value, in one walk, in document order as always: the body's rules
   * over all of it, and each free-form member's own rules over the member. The copy handed on
   * holds the members' CheckedJson (their guarded copies or problems), or members without rules
   * as sent: an item of 90,000 numbers is walked and copied once.
   */
  private guardBody(value: unknown, members: ReadonlyMap<string, MemberRules | null>): unknown {
    if (members.size === 0 || !isPlainObject(value)) return guardJson(value, this.requestRules, '');
    const checked = checkBody(value, this.requestRules, members);
    if (!checked.ok) throw new ValidationFailedError(checked.errors);
    return checked.value;
  }

  /**
   * Nest's transform and validation of a guarded value, with its free-form members taken out
   * (stand-ins of the same presence) and put back, as the guard left them, into the DTO made of it.
   */
  private async transformObject(guarded: unknown, metadata: ArgumentMetadata): Promise<unknown> {
    const members = metadata.metatype ? this.membersOf(metadata.metatype) : undefined;
    if (members === undefined || members.size === 0 || !isPlainObject(guarded))
      return super.transform(guarded, metadata);
    // The guarded value is the request guard's own object: it can lend its members.
    const lent = new Map<string, unknown>();
    for (const member of members.keys()) {
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
 * data guard's, so that the body's rules never refuse a body whose item the data guard accepts.
 * The two budgets are counted apart in the one walk (checkBody).
 */
export const DEFAULT_RAW_JSON_BUDGET: JsonBudget = { maxDepth: 20, maxNodes: 200_000 };

/** A ValidationPipe whose failures list every offending field as problem `errors`. */
export function createValidationPipe(
  budget: JsonBudget,
  limits?: AppConfig['limits'],
): ValidationPipe {
  return new StrictValidationPipe(budget, limits);
}
