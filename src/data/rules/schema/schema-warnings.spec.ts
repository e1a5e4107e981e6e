import type { Response } from 'express';
import { lastValueFrom, of } from 'rxjs';
import type { CustomerPrincipal } from '../../../auth';
import type { SchemaError } from './item-schemas';
import {
  answeringWarnings,
  collectWarnings,
  gatherWarnings,
  noteWarnings,
  schemaWarningsHeader,
  SCHEMA_WARNINGS_HEADER,
} from './schema-warnings';

const principal = (): CustomerPrincipal => ({
  kind: 'root',
  keyId: 'k',
  subject: 's',
  branch: 'main',
  boundBranch: null,
});
const warning = (pointer: string): SchemaError => ({ pointer, keyword: 'type', message: 'wrong' });
const tick = () => new Promise((resolve) => setImmediate(resolve));

describe('schema warnings', () => {
  it('notes into the list of the principal a write is made for, and nowhere without one', () => {
    const request = principal();
    const other = principal();
    const list: SchemaError[] = [];
    gatherWarnings(request, list);
    noteWarnings(request, [warning('/a')]);
    noteWarnings(other, [warning('/b')]);
    expect(list).toEqual([warning('/a')]);
  });

  it('keeps the lists of concurrent items apart and gives the request all of them', async () => {
    const request = principal();
    const all: SchemaError[] = [];
    gatherWarnings(request, all);
    const item = (pointer: string, wait: number) =>
      collectWarnings(request, async (own) => {
        for (let i = 0; i < wait; i += 1) await tick();
        noteWarnings(own, [warning(pointer)]);
        return pointer;
      });
    const [slow, fast] = await Promise.all([item('/slow', 3), item('/fast', 1)]);
    expect(slow).toEqual({ value: '/slow', warnings: [warning('/slow')] });
    expect(fast).toEqual({ value: '/fast', warnings: [warning('/fast')] });
    expect(all).toEqual([warning('/fast'), warning('/slow')]);
  });

  it("answers a request's warnings in its header once the handler answers", async () => {
    const request = principal();
    const headers = new Map<string, string>();
    const res = {
      headersSent: false,
      setHeader: (name: string, value: string) => headers.set(name, value),
    } as unknown as Response;
    const answered = answeringWarnings(request, res, of('done'));
    noteWarnings(request, [warning('/address/city'), warning('/a b')]);
    await expect(lastValueFrom(answered)).resolves.toBe('done');
    expect(headers.get(SCHEMA_WARNINGS_HEADER)).toBe('#/address/city type, #/a%20b type');
  });

  it('sets no header when the writes broke no schema', async () => {
    const headers = new Map<string, string>();
    const res = {
      headersSent: false,
      setHeader: (name: string, value: string) => headers.set(name, value),
    } as unknown as Response;
    await lastValueFrom(answeringWarnings(principal(), res, of('done')));
    expect(headers.size).toBe(0);
    expect(schemaWarningsHeader([])).toBeNull();
  });
});
