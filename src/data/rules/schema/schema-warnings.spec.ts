import type { Response } from 'express';
import { DomainError } from '../../../common/errors';
import { Reply } from '../../../common/http/reply';
import type { SchemaError } from './item-schemas';
import { schemasWith } from './item-schemas.fixture';
import { SchemaEnforcement } from './schema-enforcement';
import { answerWarnings, schemaWarningsHeader, SCHEMA_WARNINGS_HEADER } from './schema-warnings';

const warning = (pointer: string): SchemaError => ({ pointer, keyword: 'type', message: 'wrong' });

/** A response that records the headers a reply sets on it. */
function response(): { res: Response; headers: Map<string, string> } {
  const headers = new Map<string, string>();
  const res = {
    req: { headers: {} },
    setHeader: (name: string, value: string) => headers.set(name, value),
  } as unknown as Response;
  return { res, headers };
}

/** A collection whose schema wants `qty` a number, under `action`. */
const collection = (action: 'warn' | 'error') => ({
  physical: 'd_x',
  rules: {
    schema: {
      text: JSON.stringify({ properties: { qty: { type: 'number' } } }),
      action,
      changedAt: new Date(0),
    },
  },
});

describe('schema warnings', () => {
  const enforcement = new SchemaEnforcement(schemasWith());

  it("answers a warn schema's violations as the write's own value", () => {
    const warned = collection('warn');
    expect(enforcement.enforce(warned, { qty: 'many' }, 'owner')).toEqual([
      expect.objectContaining({ pointer: '/qty', keyword: 'type' }),
    ]);
    expect(enforcement.enforce(warned, { qty: 1 }, 'owner')).toEqual([]);
    expect(
      enforcement.enforceAll(warned, [{ qty: 'a' }, { qty: 2 }, { qty: 'b' }], 'owner'),
    ).toHaveLength(2);
    expect(enforcement.enforce({ physical: 'd_y' }, { qty: 'many' }, 'owner')).toEqual([]);
  });

  it('refuses under an error schema instead of answering warnings', () => {
    expect(() => enforcement.enforce(collection('error'), { qty: 'many' }, 'owner')).toThrow(
      DomainError,
    );
  });

  it('sets the header from the warnings a write returned', () => {
    const { res, headers } = response();
    answerWarnings(Reply.of({}), [
      warning('/address/city'),
      warning('/a b'),
      warning('/address/city'),
    ]).writeHead(res);
    expect(headers.get(SCHEMA_WARNINGS_HEADER)).toBe('#/address/city type, #/a%20b type');
  });

  it('sets no header when the writes broke no schema', () => {
    const { res, headers } = response();
    answerWarnings(Reply.of({}), []).writeHead(res);
    expect(headers.size).toBe(0);
    expect(schemaWarningsHeader([])).toBeNull();
  });
});
