import { applyDecorators, type Type } from '@nestjs/common';
import { ApiBadRequestResponse, ApiOkResponse, ApiQuery } from '@nestjs/swagger';
import type { Request } from 'express';
import { ProblemDto, ValidationFailedError, type FieldError } from '../errors';
import { parseListQuery } from '../http/list-query';
import { keysetLink } from './keyset';

/** A named parameter's rule: the problem with a value, or undefined when it is right. */
export type KeysetParamRule = (value: string) => string | undefined;

/** A list in one fixed order, paged by `limit` and one cursor `after[<cursor>]`. */
export interface KeysetPageOptions {
  limitDefault: number;
  limitMax: number;
  /** The cursor's field (`after[id]`), and what a valid value looks like. */
  cursor: { field: string; valid: (value: string) => boolean; rule: string };
  /** Further named parameters the route takes (filters such as `clientId`), each with its rule. */
  params?: Readonly<Record<string, KeysetParamRule>>;
  /** Says why sort, before[…] and filter[…] are refused (the order is fixed). */
  order: string;
}

export interface KeysetPage {
  limit: number;
  after?: string;
  params: Record<string, string>;
}

/**
 * Reads a fixed-order list's query: `limit`, `after[<cursor>]` and the named `params`; a sort,
 * another cursor or any other parameter is a 400 naming it. The named parameters are checked by
 * their rules once the rest is right, in their order: the first wrong one is the 400.
 */
export function parseKeysetPage(
  raw: Record<string, unknown>,
  options: KeysetPageOptions,
): KeysetPage {
  const rules = options.params ?? {};
  const query = parseListQuery(raw, {
    limitDefault: options.limitDefault,
    limitMax: options.limitMax,
    params: Object.keys(rules),
  });
  const errors: FieldError[] = [];
  for (const key of Object.keys(raw).filter((k) => /^(sort|sortOrder|before\[|filter\[)/.test(k)))
    errors.push({ field: key, message: `is not supported: ${options.order}` });
  for (const field of Object.keys(query.filters))
    if (!errors.some((e) => e.field === field))
      errors.push({ field, message: 'is not a recognised parameter' });
  const { field: cursor } = options.cursor;
  for (const [field, value] of Object.entries(query.after))
    if (field !== cursor || !options.cursor.valid(value))
      errors.push({
        field: `after[${field}]`,
        message: `the cursor is after[${cursor}]=${options.cursor.rule}`,
      });
  if (errors.length > 0) throw new ValidationFailedError(errors);
  for (const [field, rule] of Object.entries(rules)) {
    const value = query.params[field];
    const message = value === undefined ? undefined : rule(value);
    if (message !== undefined) throw new ValidationFailedError([{ field, message }]);
  }
  const after = query.after[cursor];
  return { limit: query.limit, params: query.params, ...(after !== undefined ? { after } : {}) };
}

/** The `Link: <…>; rel="next"` of a page (Reply.page): none when no cursor follows it. */
export function nextPageLink(
  req: Request,
  raw: Record<string, unknown>,
  cursor: Record<string, string> | undefined,
): string | undefined {
  if (!cursor) return undefined;
  const path = (req.originalUrl ?? req.url).split('?')[0] ?? '';
  return keysetLink(path, raw, 'after', cursor);
}

/** Documents a fixed-order list's `limit` and its cursor `after[<field>]` (values matching `pattern`). */
export function ApiKeysetPage(
  field: string,
  pattern: string,
  description: string,
): MethodDecorator {
  return applyDecorators(
    ApiQuery({
      name: 'limit',
      required: false,
      schema: { type: 'integer', minimum: 1, maximum: 500, default: 50 },
    }),
    ApiQuery({
      name: 'after',
      required: false,
      style: 'deepObject',
      explode: true,
      description: `Keyset cursor \`after[${field}]=…\`: ${description}`,
      schema: {
        type: 'object',
        properties: { [field]: { type: 'string', pattern } },
        additionalProperties: false,
      },
    }),
  );
}

/**
 * Documents a fixed-order list: its page parameters (ApiKeysetPage), a page of `item` with the
 * `Link` to the next one, and the 400 of a wrong parameter.
 */
export function ApiKeysetList(
  item: Type<unknown>,
  field: string,
  pattern: string,
  description: string,
): MethodDecorator {
  return applyDecorators(
    ApiKeysetPage(field, pattern, description),
    ApiOkResponse({ type: [item], description: 'A page; `Link` names the next one' }),
    ApiBadRequestResponse({ type: ProblemDto }),
  );
}
