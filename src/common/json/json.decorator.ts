import { ValidateBy, type ValidationArguments } from 'class-validator';
import type { FieldError } from '../errors';
import { checkJson, type JsonRules } from './json-validator';

/** The constraint's name; the validation pipe lists its problems instead of its one message. */
export const JSON_CONSTRAINT = 'jsonMember';

const problemsByObject = new WeakMap<object, Map<string, FieldError[]>>();

/**
 * A free-form JSON member of a DTO, checked by the JSON validator with the rules that `rules()`
 * returns when the request is validated (so they can follow the configuration). An absent member
 * passes, and so does null when `nullable`. A valid member is replaced by its guarded copy.
 *
 * The validator finds problems at paths below the member, but class-validator keeps one message
 * per constraint; the problems are therefore kept beside the validated object, where the
 * validation pipe's error list reads them (jsonProblemsOf).
 */
export function JsonMember(
  rules: () => JsonRules,
  options: { nullable?: boolean } = {},
): PropertyDecorator {
  return ValidateBy({
    name: JSON_CONSTRAINT,
    validator: {
      validate(value: unknown, args: ValidationArguments): boolean {
        if (value === undefined || (value === null && options.nullable === true)) return true;
        const result = checkJson(value, rules(), args.property);
        const object = args.object as Record<string, unknown>;
        if (result.ok) {
          object[args.property] = result.value;
          return true;
        }
        const problems = problemsByObject.get(object) ?? new Map<string, FieldError[]>();
        problems.set(args.property, result.errors);
        problemsByObject.set(object, problems);
        return false;
      },
      defaultMessage: (args?: ValidationArguments) =>
        `${args?.property ?? 'value'} breaks the JSON rules`,
    },
  });
}

/** The problems JsonMember found in `property` of `object` (paths start with the property name). */
export function jsonProblemsOf(object: object | undefined, property: string): FieldError[] {
  return (object && problemsByObject.get(object)?.get(property)) ?? [];
}
