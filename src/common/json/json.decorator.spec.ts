import { plainToInstance } from 'class-transformer';
import { validate } from 'class-validator';
import { JsonMember, JSON_CONSTRAINT, jsonProblemsOf } from './json.decorator';
import { isGuarded, jsonValueProblem, type JsonRules } from './json-validator';

let maxDepth = 2;
const rules = (): JsonRules => ({
  key: (key) => (key.startsWith('$') ? 'no operators' : null),
  value: jsonValueProblem,
  budget: { maxDepth },
});

class Body {
  @JsonMember(rules)
  data?: unknown;

  @JsonMember(rules, { nullable: true })
  patch?: unknown;
}

async function check(plain: object) {
  const body = plainToInstance(Body, plain);
  const errors = await validate(body, { validationError: { target: true } });
  return { body, errors };
}

describe('JsonMember', () => {
  afterEach(() => {
    maxDepth = 2;
  });

  it('replaces a valid member by its guarded copy and lets absent members pass', async () => {
    const { body, errors } = await check({ data: { a: [1, 'x'], b: true } });
    expect(errors).toEqual([]);
    expect(body.data).toEqual({ a: [1, 'x'], b: true });
    expect(isGuarded(body.data)).toBe(true);
    expect(body.patch).toBeUndefined();
  });

  it('keeps every problem beside the object, with paths below the member', async () => {
    const { errors } = await check({ data: { $a: 1, b: { $c: 2 } } });
    expect(errors).toHaveLength(1);
    const [error] = errors;
    expect(Object.keys(error?.constraints ?? {})).toEqual([JSON_CONSTRAINT]);
    expect(jsonProblemsOf(error?.target, 'data')).toEqual([
      { field: 'data.$a', message: 'no operators' },
      { field: 'data.b.$c', message: 'no operators' },
    ]);
    expect(jsonProblemsOf(undefined, 'data')).toEqual([]);
  });

  it('accepts null only where it is nullable', async () => {
    expect((await check({ patch: null })).errors).toEqual([]);
    const { errors } = await check({ data: null });
    expect(jsonProblemsOf(errors[0]?.target, 'data')).toEqual([
      { field: 'data', message: 'must be a JSON object' },
    ]);
  });

  it('reads the rules when it validates', async () => {
    expect((await check({ data: { a: { b: {} } } })).errors).toHaveLength(1);
    maxDepth = 3;
    expect((await check({ data: { a: { b: {} } } })).errors).toEqual([]);
  });
});
