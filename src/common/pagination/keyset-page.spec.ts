import { ValidationFailedError } from '../errors';
import { parseKeysetPage, type KeysetPageOptions } from './keyset-page';

const options: KeysetPageOptions = {
  limitDefault: 50,
  limitMax: 500,
  cursor: { field: 'id', valid: (value) => /^[0-9]+$/.test(value), rule: '<number>' },
  params: {
    first: (value) => (value.length > 3 ? 'must be at most 3 characters' : undefined),
    second: (value) => (value === 'bad' ? 'must not be bad' : undefined),
  },
  order: 'listed by id',
};

function problems(raw: Record<string, unknown>): unknown {
  try {
    parseKeysetPage(raw, options);
  } catch (error) {
    if (error instanceof ValidationFailedError) return { errors: error.errors };
    throw error;
  }
  throw new Error('parsed without a problem');
}

describe('parseKeysetPage', () => {
  it('hands on the page and the named parameters that keep their rules', () => {
    expect(parseKeysetPage({ limit: '2', 'after[id]': '7', first: 'abc' }, options)).toEqual({
      limit: 2,
      after: '7',
      params: expect.objectContaining({ first: 'abc' }) as unknown,
    });
  });

  it('answers a named parameter against its rule with that parameter alone, the first in order', () => {
    expect(problems({ second: 'bad' })).toMatchObject({
      errors: [{ field: 'second', message: 'must not be bad' }],
    });
    expect(problems({ second: 'bad', first: 'abcd' })).toMatchObject({
      errors: [{ field: 'first', message: 'must be at most 3 characters' }],
    });
  });

  it('answers the page first: the rules are not asked while the rest is wrong', () => {
    expect(problems({ first: 'abcd', sort: 'id', 'after[name]': 'x' })).toMatchObject({
      errors: [
        { field: 'sort', message: 'is not supported: listed by id' },
        { field: 'after[name]', message: 'the cursor is after[id]=<number>' },
      ],
    });
  });

  it('refuses a parameter that is not named', () => {
    expect(problems({ third: 'x' })).toMatchObject({
      errors: [{ field: 'third', message: 'is not a recognised parameter' }],
    });
  });
});
