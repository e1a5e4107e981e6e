import * as classTransformer from 'class-transformer';
import { ValidationFailedError } from '../../../common/errors';
import { createValidationPipe, DEFAULT_RAW_JSON_BUDGET } from '../../../common/http/validation';
import { isGuarded } from '../../../common/json';
import { loadConfig } from '../../../config';
import { toBulkInputs, toItemChangeRequest, toNewItemRequest } from '../../query/data-requests';
import { filterLimits } from '../../query/filter-operators';
import { dataBudget } from '../../query/json-guard';
import { BulkCreateDataItemsDto } from './data-batch.dto';
import { CreateDataItemDto, UpdateDataItemDto } from './data-item.dto';

/**
 * The free-form members of data bodies (item, values, filter, items) at the validation pipe:
 * checked with the body, handed on as sent, never walked by class-transformer (on an item of
 * 90,000 numbers that walk held the event loop for tens of milliseconds).
 */
const pipe = createValidationPipe(DEFAULT_RAW_JSON_BUDGET);
const body = (value: unknown, metatype: new () => object) =>
  pipe.transform(value, { type: 'body', metatype, data: undefined });

async function refusal(promise: Promise<unknown>): Promise<unknown> {
  try {
    await promise;
  } catch (error) {
    if (error instanceof ValidationFailedError) return error.errors;
    throw error;
  }
  throw new Error('expected a ValidationFailedError');
}

afterEach(() => jest.restoreAllMocks());

it('hands the item on as sent, and class-transformer is given none of it', async () => {
  const transform = jest.spyOn(classTransformer, 'plainToInstance');
  const item = { a: Array.from({ length: 1000 }, (_, i) => i), b: { c: [null, 'x'] }, d: null };
  const dto = (await body(
    JSON.parse(JSON.stringify({ item, uniqueField: 'b' })),
    CreateDataItemDto,
  )) as CreateDataItemDto;
  expect(dto).toBeInstanceOf(CreateDataItemDto);
  expect(dto.item).toEqual(item);
  expect(dto.uniqueField).toBe('b');
  const given = transform.mock.calls.map(([, value]) => value as Record<string, unknown>);
  expect(given).toHaveLength(1);
  // The other members are transformed as before; the item is only a stand-in there.
  expect(given[0]).toMatchObject({ uniqueField: 'b' });
  expect(typeof given[0]?.item).not.toBe('object');
});

it('hands on the item the request holds, for the data guard to copy once', async () => {
  const sent = JSON.parse('{"item":{"a":[1,2,3],"b":{"c":null}},"authField":"owner"}') as {
    item: unknown;
  };
  const dto = (await body(sent, CreateDataItemDto)) as CreateDataItemDto;
  expect(dto.item).toBe(sent.item);
  expect(dto.item).toEqual({ a: [1, 2, 3], b: { c: null } });
  expect(dto.authField).toBe('owner');
});

it('keeps inherited free-form members out of class-transformer too (filter of PUT)', async () => {
  const transform = jest.spyOn(classTransformer, 'plainToInstance');
  const sent = { values: { n: [1, 2, 3] }, filter: { status: { in: ['a', 'b'] } } };
  const dto = (await body(
    JSON.parse(JSON.stringify(sent)),
    UpdateDataItemDto,
  )) as UpdateDataItemDto;
  expect({ values: dto.values, filter: dto.filter }).toEqual(sent);
  const given = transform.mock.calls[0]?.[1] as Record<string, unknown>;
  expect([typeof given.values, typeof given.filter]).toEqual(['boolean', 'boolean']);
});

it('keeps an explicit null a value and an absent member absent', async () => {
  expect(await refusal(body({ item: null }, CreateDataItemDto))).toEqual([
    { field: 'item', message: 'item should not be null or undefined' },
  ]);
  expect(await refusal(body({}, CreateDataItemDto))).toEqual([
    { field: 'item', message: 'item should not be null or undefined' },
  ]);
  // filter is nullable (null: no further conditions); values is required.
  const dto = (await body(
    { values: { a: null }, filter: null },
    UpdateDataItemDto,
  )) as UpdateDataItemDto;
  expect(dto.filter).toBeNull();
  expect(dto.values).toEqual({ a: null });
  const absent = (await body({ values: { a: 1 } }, UpdateDataItemDto)) as UpdateDataItemDto;
  expect(absent.filter).toBeUndefined();
  // A value of another type is the data guard's to refuse, as before.
  const scalar = (await body({ items: 5 }, BulkCreateDataItemsDto)) as BulkCreateDataItemsDto;
  expect(scalar.items).toBe(5);
});

it('still checks the item with the body, in document order, and refuses other members', async () => {
  const errors = await refusal(
    body(
      JSON.parse('{"item":{"a":[1,{"__proto__":1}],"constructor":2},"uniqueField":3,"extra":1}'),
      CreateDataItemDto,
    ),
  );
  expect(errors).toEqual([
    { field: 'item.a[1].__proto__', message: "field name '__proto__' is a reserved name" },
    { field: 'item.constructor', message: "field name 'constructor' is a reserved name" },
  ]);
  expect(await refusal(body({ item: {}, uniqueField: 3, extra: 1 }, CreateDataItemDto))).toEqual(
    expect.arrayContaining([
      { field: 'extra', message: 'property extra should not exist' },
      { field: 'uniqueField', message: 'uniqueField must be a string' },
    ]),
  );
});

describe('with the limits the app gives the pipe', () => {
  const { limits } = loadConfig({});
  const appPipe = createValidationPipe(
    { ...DEFAULT_RAW_JSON_BUDGET, maxDepth: limits.dataMaxDepth },
    limits,
  );
  const budget = dataBudget(limits);
  const appBody = (value: unknown, metatype: new () => object) =>
    appPipe.transform(value, { type: 'body', metatype, data: undefined });

  /** An item that counts how often its keys are listed: once per walk over it. */
  function counted(item: Record<string, unknown>): { item: object; walks: () => number } {
    let walks = 0;
    const proxy = new Proxy(item, {
      ownKeys: (target) => {
        walks += 1;
        return Reflect.ownKeys(target);
      },
    });
    return { item: proxy, walks: () => walks };
  }

  it('walks the item once: the body and the item are checked in the same walk', async () => {
    const { item, walks } = counted({ a: [1, 2, { b: 'x' }], c: { d: null }, _id: 'i-1' });
    const dto = (await appBody({ item, uniqueField: 'c' }, CreateDataItemDto)) as CreateDataItemDto;
    const request = toNewItemRequest(dto, budget);
    expect(walks()).toBe(1);
    expect(request.id).toBe('i-1');
    expect(request.item).toEqual({ a: [1, 2, { b: 'x' }], c: { d: null } });
    expect(request.item).not.toBe(item);
    expect(isGuarded(request.item)).toBe(true);
  });

  it('walks a PUT body once, values and filter each under their own rules', async () => {
    const values = counted({ n: { m: [1] } });
    const filter = counted({ status: { in: ['a', 'b'] } });
    const dto = (await appBody(
      { values: values.item, filter: filter.item },
      UpdateDataItemDto,
    )) as UpdateDataItemDto;
    const change = toItemChangeRequest(dto, budget, filterLimits(limits));
    expect([values.walks(), filter.walks()]).toEqual([1, 1]);
    expect(change.values).toEqual({ n: { m: [1] } });
    expect(change.conditions).toEqual([{ kind: 'eq', path: 'status', anyOf: ['a', 'b'] }]);
  });

  it("keeps the item's own problems for the handler, after the DTO's", async () => {
    const sent = JSON.parse('{"item":{"$x":1,"b":{"c.d":2}},"uniqueField":"$u"}') as object;
    const dto = (await appBody(sent, CreateDataItemDto)) as CreateDataItemDto;
    expect(await refusal(Promise.resolve().then(() => toNewItemRequest(dto, budget)))).toEqual([
      { field: 'item.$x', message: "field name must not start with '$'" },
      { field: 'item.b.c.d', message: "field name must not contain '.'" },
    ]);
    // A DTO problem beside them is answered at the pipe, alone.
    expect(await refusal(appBody({ ...sent, uniqueField: 5 }, CreateDataItemDto))).toEqual([
      {
        field: 'uniqueField',
        message: 'uniqueField must be shorter than or equal to 256 characters',
      },
      { field: 'uniqueField', message: 'uniqueField must be a string' },
    ]);
  });

  it('gives each item of a bulk create its own budget and problems', async () => {
    // Each item: nesting within 2 levels, at most 10 characters of keys and strings.
    const small = { ...limits, dataMaxDepth: 2, bodyBytes: 10 };
    const pipe = createValidationPipe(DEFAULT_RAW_JSON_BUDGET, small);
    const items = [
      { a: { b: 1 } },
      { s: 'abcdefg' },
      'x',
      { a: { b: { c: 1 } } },
      { s: 'abcdefghij' },
    ];
    const dto = (await pipe.transform(
      { items },
      { type: 'body', metatype: BulkCreateDataItemsDto, data: undefined },
    )) as BulkCreateDataItemsDto;
    const outcome = toBulkInputs(dto, dataBudget(small), 10).map((input) =>
      'request' in input ? input.request.item : input.refused.errors,
    );
    expect(outcome).toEqual([
      { a: { b: 1 } },
      { s: 'abcdefg' },
      [{ field: 'item', message: 'must be a JSON object' }],
      [{ field: 'item.a.b', message: 'is nested deeper than 2 levels' }],
      [{ field: 'item', message: 'has more than 10 characters' }],
    ]);
  });
});
