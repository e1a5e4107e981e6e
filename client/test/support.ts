// What the flows share: the service under test, new users made by the operator, and the check of
// a problem answer.
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { createApiClient, problemOf, unwrap, type ApiClient, type Problem } from '../src';

/** Where the service is and the operator key it was started with. */
export interface Target {
  baseUrl: string;
  adminKey: string;
}

export function unique(prefix: string): string {
  return `${prefix}-${randomBytes(4).toString('hex')}`;
}

/** A new user (root profile and its first key) created with the operator key. */
export async function newUser(
  target: Target,
): Promise<{ api: ApiClient; apiKey: string; subject: string }> {
  const operator = createApiClient({ baseUrl: target.baseUrl, apiKey: target.adminKey });
  const created = await unwrap(
    operator.POST('/admin/users', { body: { email: `${unique('user')}@example.com` } }),
  );
  assert.match(created.apiKey, /^pds_/);
  return {
    api: createApiClient({ baseUrl: target.baseUrl, apiKey: created.apiKey }),
    apiKey: created.apiKey,
    subject: created.profile.subject,
  };
}

/** The problem a failed call carried, after checking the status and that it is one. */
export function expectProblem(
  result: { error?: unknown; response: Response },
  status: number,
  code: Problem['code'],
): Problem {
  assert.equal(result.response.status, status);
  assert.match(result.response.headers.get('Content-Type') ?? '', /^application\/problem\+json/);
  const problem = problemOf(result.error);
  assert.ok(problem, `a ${status} answer carries a problem`);
  assert.equal(problem.code, code);
  assert.equal(problem.status, status);
  // The trace id is the request id the response header repeats.
  assert.equal(problem.traceId, result.response.headers.get('X-Request-Id'));
  return problem;
}
