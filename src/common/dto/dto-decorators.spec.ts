import { plainToInstance } from 'class-transformer';
import { IsString, validateSync } from 'class-validator';
import { OptionalField } from './optional-field';
import { IsRfc3339Date } from './rfc3339-date';

class Sample {
  @OptionalField()
  @IsString()
  name?: string;

  @OptionalField({ nullable: true })
  @IsString()
  note?: string | null;

  @OptionalField()
  @IsRfc3339Date()
  at?: Date;
}

function problems(plain: object): string[] {
  return validateSync(plainToInstance(Sample, plain)).map((e) => e.property);
}

describe('OptionalField', () => {
  it('skips an absent member and checks an explicit null', () => {
    expect(problems({})).toEqual([]);
    expect(problems({ name: null })).toEqual(['name']);
  });

  it('lets null through where the member is nullable', () => {
    expect(problems({ note: null })).toEqual([]);
    expect(problems({ note: 5 })).toEqual(['note']);
  });
});

describe('IsRfc3339Date', () => {
  it('turns an RFC 3339 string into its Date', () => {
    const sample = plainToInstance(Sample, { at: '2026-01-02T03:04:05+01:00' });
    expect(validateSync(sample)).toEqual([]);
    expect(sample.at).toEqual(new Date('2026-01-02T02:04:05Z'));
  });

  it.each([false, true, 0, 1767225600000, '2030', '2026-02-30T00:00:00Z', 'Jan 2 2026', null, {}])(
    'refuses %j',
    (at) => {
      expect(problems({ at })).toEqual(['at']);
    },
  );
});
