import { applyDecorators } from '@nestjs/common';
import { Transform } from 'class-transformer';
import { ValidateBy, type ValidationArguments } from 'class-validator';
import { parseRfc3339 } from '../pagination/rfc3339';

/**
 * A date-time member: an RFC 3339 string (`2026-01-02T03:04:05Z`), handed on as a Date.
 * `@Type(() => Date)` would take anything `new Date()` takes (false, true, numbers, '2030'), so
 * only what parseRfc3339 accepts becomes a Date here, and anything else is refused as it was sent.
 */
export function IsRfc3339Date(): PropertyDecorator {
  return applyDecorators(
    Transform(({ obj, key }: { obj: Record<string, unknown>; key: string }) => {
      const raw = obj[key];
      return typeof raw === 'string' ? (parseRfc3339(raw)?.date ?? raw) : raw;
    }),
    ValidateBy({
      name: 'isRfc3339Date',
      validator: {
        validate: (value: unknown) => value instanceof Date,
        defaultMessage: (args?: ValidationArguments) =>
          `${args?.property ?? 'value'} must be an RFC 3339 date-time string, e.g. 2026-01-02T03:04:05Z`,
      },
    }),
  );
}
