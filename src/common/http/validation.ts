import { ValidationPipe } from '@nestjs/common';
import type { ValidationError } from 'class-validator';
import { ValidationFailedError, type FieldError } from '../errors';
import { guardRawJson, type RawJsonBudget } from '../json/raw-json-guard';

function flatten(errors: ValidationError[], parent = ''): FieldError[] {
  return errors.flatMap((error) => {
    const field = parent ? `${parent}.${error.property}` : error.property;
    const own = Object.values(error.constraints ?? {}).map((message) => ({ field, message }));
    return [...own, ...flatten(error.children ?? [], field)];
  });
}

/**
 * Nest's ValidationPipe silently deletes `__proto__`, `constructor` and `prototype` keys,
 * recursively, before validating; this one refuses them with a 400 instead (nothing a client
 * sends is dropped without a word), and checks the body's nesting and size first, so that the
 * recursive copy of class-transformer never meets hostile input.
 */
class StrictValidationPipe extends ValidationPipe {
  constructor(private readonly budget: RawJsonBudget) {
    super({
      whitelist: true,
      forbidNonWhitelisted: true,
      transform: true,
      validationError: { target: false, value: false },
      exceptionFactory: (errors) => new ValidationFailedError(flatten(errors)),
    });
  }

  protected override stripProtoKeys(value: unknown): void {
    guardRawJson(value, this.budget);
  }
}

/** The default budget: the data API's nesting limit and a node count no legitimate body nears. */
export const DEFAULT_RAW_JSON_BUDGET: RawJsonBudget = { maxDepth: 20, maxNodes: 100_000 };

/** A ValidationPipe whose failures list every offending field as problem `errors`. */
export function createValidationPipe(
  budget: RawJsonBudget = DEFAULT_RAW_JSON_BUDGET,
): ValidationPipe {
  return new StrictValidationPipe(budget);
}
