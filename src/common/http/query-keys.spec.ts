import type { Request, Response } from 'express';
import { ProblemRenderer, ValidationFailedError, type DomainError } from '../errors';
import {
  isPrototypeKey,
  MAX_QUERY_PARAMETERS,
  queryKeyError,
  queryKeyGuard,
  rawQueryKeys,
  rawQueryString,
} from './query-keys';

function fieldsOf(error: DomainError | null): string[] {
  expect(error).toBeInstanceOf(ValidationFailedError);
  return (error?.errors ?? []).map((e) => e.field);
}

describe('isPrototypeKey', () => {
  it.each([
    '__proto__',
    'constructor',
    'prototype',
    'filter[__proto__]',
    'existsFilter[constructor]',
    'before[prototype]',
    'after[__proto__]',
    'a.__proto__',
    'filter[a.constructor]',
    '__proto__[x]',
    'x[prototype][y]',
    'a.b.prototype.c',
  ])('flags %p', (key) => {
    expect(isPrototypeKey(key)).toBe(true);
  });

  it.each([
    'name',
    'filter[name]',
    'existsFilter[email]',
    'a.b',
    '__proto',
    'proto__',
    '_proto_',
    'constructors',
    'myprototype',
    'filter[__proto__x]',
    'Constructor',
    '__PROTO__',
    '',
  ])('accepts %p', (key) => {
    expect(isPrototypeKey(key)).toBe(false);
  });
});

describe('rawQueryString and rawQueryKeys', () => {
  it('takes the part after the first ? and before any fragment', () => {
    expect(rawQueryString('/data/x')).toBe('');
    expect(rawQueryString('/data/x?')).toBe('');
    expect(rawQueryString('/data/x?a=1&b=2')).toBe('a=1&b=2');
    expect(rawQueryString('/data/x?a=1?b=2#frag')).toBe('a=1?b=2');
  });

  it('decodes keys the way node:querystring does, repeats and empty values included', () => {
    expect(
      rawQueryKeys('a=1&%5F%5Fproto%5F%5F=2&filter%5Bx%5D=3&b+c=4&flag&a=5&&=6&bad%ZZ=7&x==y'),
    ).toEqual(['a', '__proto__', 'filter[x]', 'b c', 'flag', 'a', '', 'bad%ZZ', 'x']);
  });
});

describe('queryKeyError', () => {
  it('accepts ordinary query strings and prototype names as values', () => {
    expect(queryKeyError('/data/notes')).toBeNull();
    expect(queryKeyError('/data/notes?filter[color]=red&sort=n&limit=5')).toBeNull();
    expect(queryKeyError('/data/notes?color=__proto__&filter[a]=constructor')).toBeNull();
  });

  it('names every offending key once, as sent', () => {
    expect(
      fieldsOf(
        queryKeyError(
          '/data/notes?__proto__=1&color=red&__proto__=2&filter[constructor]=x&a.prototype=y',
        ),
      ),
    ).toEqual(['__proto__', 'filter[constructor]', 'a.prototype']);
  });

  it('sees keys that are percent-encoded or split by +', () => {
    expect(fieldsOf(queryKeyError('/p?existsFilter%5B%5F%5Fproto%5F%5F%5D=false'))).toEqual([
      'existsFilter[__proto__]',
    ]);
    expect(fieldsOf(queryKeyError('/p?a+b.constructor=1'))).toEqual(['a b.constructor']);
  });

  it('refuses more parameters than node:querystring keeps', () => {
    const pairs = (n: number) => Array.from({ length: n }, (_, i) => `k${i}=1`).join('&');
    expect(queryKeyError(`/p?${pairs(MAX_QUERY_PARAMETERS)}`)).toBeNull();
    const error = queryKeyError(`/p?${pairs(MAX_QUERY_PARAMETERS)}&__proto__=1`);
    expect(error?.code).toBe('INVALID_QUERY');
    expect(queryKeyError(`/p?${'&'.repeat(MAX_QUERY_PARAMETERS)}`)?.code).toBe('INVALID_QUERY');
  });
});

describe('queryKeyGuard', () => {
  const renderer = new ProblemRenderer(1);

  function run(url: string): { next: jest.Mock; send: jest.SpyInstance } {
    const send = jest.spyOn(renderer, 'send').mockImplementation(() => undefined);
    const next = jest.fn();
    queryKeyGuard(renderer)({ url } as Request, {} as Response, next);
    return { next, send };
  }

  afterEach(() => jest.restoreAllMocks());

  it('passes clean requests on', () => {
    const { next, send } = run('/project?filter[name]=a');
    expect(next).toHaveBeenCalledWith();
    expect(send).not.toHaveBeenCalled();
  });

  it('answers a prototype key itself, with a validation problem naming it', () => {
    const { next, send } = run('/project?filter[__proto__]=a');
    expect(next).not.toHaveBeenCalled();
    expect(send).toHaveBeenCalledTimes(1);
    const error = send.mock.calls[0]?.[0] as DomainError;
    expect(error.code).toBe('VALIDATION_FAILED');
    expect(error.errors).toEqual([{ field: 'filter[__proto__]', message: expect.any(String) }]);
  });
});
