/** The parts of a supertest response the helpers read. */
export interface ProblemResponse {
  status: number;
  headers: Record<string, string>;
  body: { code?: unknown; status?: unknown; errors?: { field: string; message: string }[] };
}

/**
 * Asserts an RFC 9457 problem response: the HTTP status, the stable `code`, the
 * application/problem+json media type and the `status` member matching the HTTP status.
 */
export function expectProblem(res: ProblemResponse, status: number, code: string): void {
  expect({ status: res.status, code: res.body.code }).toEqual({ status, code });
  expect(res.headers['content-type']).toMatch(/^application\/problem\+json/);
  expect(res.body.status).toBe(status);
}

/**
 * The `field` of every entry in a problem's `errors`, sorted. Duplicates are kept (a field with
 * two broken rules appears twice) unless `distinct` is set.
 */
export function errorFields(
  res: Pick<ProblemResponse, 'body'>,
  { distinct = false }: { distinct?: boolean } = {},
): string[] {
  const fields = (res.body.errors ?? []).map((e) => e.field);
  return (distinct ? [...new Set(fields)] : fields).sort();
}

/**
 * Asserts a 400 VALIDATION_FAILED problem whose `errors` name at least `fields`
 * (use `expect(errorFields(res)).toEqual(…)` where the list must be exact).
 */
export function expectInvalid(res: ProblemResponse, ...fields: string[]): void {
  expectProblem(res, 400, 'VALIDATION_FAILED');
  expect(errorFields(res)).toEqual(expect.arrayContaining(fields));
}
