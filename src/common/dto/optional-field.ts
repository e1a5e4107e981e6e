import { ValidateIf } from 'class-validator';

/**
 * A member the client may leave out. Unlike class-validator's `IsOptional`, which skips the
 * member's rules for `null` as well, an explicit `null` is a value: it meets the member's other
 * rules and is refused by them, unless the member is documented as nullable (`nullable: true`,
 * where null means something, such as "clear it").
 */
export function OptionalField(options: { nullable?: boolean } = {}): PropertyDecorator {
  return options.nullable === true
    ? ValidateIf((_object: object, value: unknown) => value !== undefined && value !== null)
    : ValidateIf((_object: object, value: unknown) => value !== undefined);
}
