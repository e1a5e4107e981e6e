import { Inject, Injectable, mixin, type PipeTransform, type Type } from '@nestjs/common';
import { createValidationPipe } from '../common/http/validation';
import { ValidationFailedError, type FieldError } from '../common/errors';
import { APP_CONFIG, type AppConfig } from '../config';
import { isJsonObject, isPrototypeKey, validateProfileJson } from './profile-json';

/** How one free-form member of a body is checked by profile-json. */
export interface JsonMemberRule {
  values: 'json' | 'string';
  /** A merge patch: `null` removes a key (and, for the whole member, clears it). */
  patch: boolean;
  /** Levels the member sits below the stored object (userMetadata lives in settings: 1). */
  depthOffset?: number;
}

/**
 * A body pipe for routes with free-form JSON members. The global ValidationPipe would let
 * class-transformer copy those members first, recursively (deep input overflows the stack) and
 * silently dropping `__proto__`/`constructor` keys. So the route declares its body parameter with
 * a non-class type (the global pipe then leaves it alone) and this pipe checks the JSON members
 * with profile-json before anything else walks them, validates the rest of the body against
 * `dto` with the usual ValidationPipe, and reports every error of both in one 400.
 */
export function ProfileJsonBodyPipe(
  dto: Type<object>,
  members: Record<string, JsonMemberRule>,
): Type<PipeTransform> {
  @Injectable()
  class ProfileJsonBody implements PipeTransform<unknown, Promise<object>> {
    private readonly validation = createValidationPipe();

    constructor(@Inject(APP_CONFIG) private readonly config: AppConfig) {}

    async transform(body: unknown): Promise<object> {
      if (!isJsonObject(body)) {
        throw new ValidationFailedError([{ field: '', message: 'the body must be a JSON object' }]);
      }
      const errors: FieldError[] = [];
      const json: Record<string, unknown> = {};
      const rest: Record<string, unknown> = {};
      for (const [key, value] of Object.entries(body)) {
        if (isPrototypeKey(key)) {
          errors.push({ field: key, message: `property ${key} should not exist` });
        } else if (Object.hasOwn(members, key)) {
          const rule = members[key]!;
          const found =
            value === null && rule.patch
              ? []
              : validateProfileJson(
                  value,
                  {
                    values: rule.values,
                    patch: rule.patch,
                    maxBytes: this.config.limits.profileJsonMaxBytes,
                    maxDepth: this.config.limits.profileJsonMaxDepth - (rule.depthOffset ?? 0),
                  },
                  key,
                );
          errors.push(...found);
          json[key] = value;
        } else {
          rest[key] = value;
        }
      }
      let instance: object = {};
      try {
        instance = (await this.validation.transform(rest, {
          type: 'body',
          metatype: dto,
        })) as object;
      } catch (error) {
        if (!(error instanceof ValidationFailedError)) throw error;
        errors.push(...(error.errors ?? []));
      }
      if (errors.length > 0) throw new ValidationFailedError(errors);
      return Object.assign(instance, json);
    }
  }
  return mixin(ProfileJsonBody);
}

/**
 * PUT /admin/users/{subject}/plans: checks each plan's free-form `metadata` with profile-json
 * before ParseArrayPipe (class-transformer) walks the body.
 */
@Injectable()
export class PlanMetadataPipe implements PipeTransform<unknown, unknown> {
  constructor(@Inject(APP_CONFIG) private readonly config: AppConfig) {}

  transform(body: unknown): unknown {
    if (!Array.isArray(body)) return body;
    const rules = {
      values: 'json',
      patch: false,
      maxBytes: this.config.limits.profileJsonMaxBytes,
      maxDepth: this.config.limits.profileJsonMaxDepth,
    } as const;
    const errors = body.flatMap((plan: unknown, i) =>
      isJsonObject(plan) && plan.metadata !== undefined
        ? validateProfileJson(plan.metadata, rules, `${i}.metadata`)
        : [],
    );
    if (errors.length > 0) throw new ValidationFailedError(errors);
    return body;
  }
}
