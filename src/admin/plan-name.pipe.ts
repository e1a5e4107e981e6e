import { Injectable, type PipeTransform } from '@nestjs/common';
import { ValidationFailedError } from '../common/errors';
import { PLAN_NAME_PATTERN } from '../plans';

/** The `{planName}` path segment: a valid plan name (PLAN_NAME_PATTERN), else 400. */
@Injectable()
export class PlanNamePipe implements PipeTransform<string, string> {
  transform(name: string): string {
    if (!PLAN_NAME_PATTERN.test(name))
      throw new ValidationFailedError([
        {
          field: 'planName',
          message: 'must be 1-64 of A-Z a-z 0-9 . _ -, starting with a letter or digit',
        },
      ]);
    return name;
  }
}
