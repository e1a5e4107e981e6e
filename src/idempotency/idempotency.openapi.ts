import type { OpenAPIObject, ParameterObject } from '@nestjs/swagger';
import type { ErrorEntry } from '../common/errors';
import { problemExample } from '../common/http/openapi-problems';
import {
  header,
  HEADERS,
  operations,
  PROBLEM_MEDIA_TYPE,
  problemResponse,
  type Response,
} from '../common/http/openapi-shared';
import {
  IDEMPOTENCY_KEY_HEADER,
  IDEMPOTENCY_KEY_MAX_LENGTH,
  IDEMPOTENCY_KEY_PATTERN,
  IDEMPOTENT_REPLAYED_HEADER,
  takesIdempotencyKey,
} from './idempotency-key';
import { IDEMPOTENCY_ERRORS } from './idempotency.errors';

/**
 * Idempotency-Key in the OpenAPI document, on exactly the operations takesIdempotencyKey names:
 * the request header, the Idempotent-Replayed response header and the 400, 409 and 422 problems.
 * Runs after the standard problems are added and before the response headers are.
 */

const IDEMPOTENCY_KEY_PARAMETER: ParameterObject = {
  name: IDEMPOTENCY_KEY_HEADER,
  in: 'header',
  required: false,
  description: [
    `A key the client chooses for this request (a UUID is a good one): a retry with the same key, method, path, query, If-Match and body gets the first response again, with \`${IDEMPOTENT_REPLAYED_HEADER}: true\`, and nothing is done again.`,
    'Keys belong to the principal (user, sub profile, team or operator) and the branch. A response below 500 is kept for IDEMPOTENCY_TTL_MS (24 hours by default); after a 5xx the key may be used again.',
    `The same key for another request → 422 IDEMPOTENCY_KEY_REUSED; while the first request still runs → 409 IDEMPOTENCY_IN_PROGRESS with Retry-After. 1-${IDEMPOTENCY_KEY_MAX_LENGTH} visible ASCII characters without \`"\` and \`\\\`, optionally in double quotes (the same key); otherwise 400 INVALID_IDEMPOTENCY_KEY.`,
  ].join(' '),
  // parseIdempotencyKey's rule: a bare key, or the same in double quotes (which allow spaces).
  schema: {
    type: 'string',
    pattern: IDEMPOTENCY_KEY_PATTERN,
    minLength: 1,
    maxLength: IDEMPOTENCY_KEY_MAX_LENGTH + 2,
  },
  example: '8e03978e-40d5-43e8-bc93-6894a57f9324',
};

const REPLAYED = header(
  'Present (`true`) when this is the kept response of an earlier request with the same Idempotency-Key; nothing was done again',
  { type: 'string', enum: ['true'] },
  false,
);

/**
 * Answered before the Idempotency-Key's guard runs (authentication, the rate limit, body
 * parsing): never replayed.
 */
const NEVER_REPLAYED = new Set(['401', '413', '415', '429']);

const PROBLEMS: { status: string; entry: ErrorEntry; why: string }[] = [
  {
    status: '400',
    entry: IDEMPOTENCY_ERRORS.INVALID_IDEMPOTENCY_KEY,
    why: 'Idempotency-Key is malformed',
  },
  {
    status: '409',
    entry: IDEMPOTENCY_ERRORS.IDEMPOTENCY_IN_PROGRESS,
    why: 'a request with this Idempotency-Key is still running; retry after Retry-After for its response',
  },
  {
    status: '422',
    entry: IDEMPOTENCY_ERRORS.IDEMPOTENCY_KEY_REUSED,
    why: 'this Idempotency-Key was used for a different request',
  },
];

function addProblem(
  responses: Record<string, Response>,
  problem: (typeof PROBLEMS)[number],
  path: string,
): void {
  const { status, entry, why } = problem;
  const response = (responses[status] ??= problemResponse(entry.title));
  response.description += `; ${entry.code}: ${why}`;
  const media = (response.content ??= {})[PROBLEM_MEDIA_TYPE] ?? {};
  response.content[PROBLEM_MEDIA_TYPE] = media;
  media.examples = {
    ...media.examples,
    [entry.code]: { summary: entry.title, value: problemExample(entry, path) },
  };
  if (entry === IDEMPOTENCY_ERRORS.IDEMPOTENCY_IN_PROGRESS) {
    // Only this 409 carries it; the operation's other 409s do not.
    response.headers = {
      ...response.headers,
      'Retry-After': { ...HEADERS.retryAfter, required: false },
    };
  }
}

export function addIdempotencyKeys(document: OpenAPIObject): void {
  for (const [path, method, operation] of operations(document)) {
    if (!takesIdempotencyKey(method, path)) continue;
    operation.parameters = [...(operation.parameters ?? []), IDEMPOTENCY_KEY_PARAMETER];
    const responses = operation.responses as Record<string, Response>;
    for (const problem of PROBLEMS) addProblem(responses, problem, path);
    for (const [status, response] of Object.entries(responses)) {
      if (Number(status) >= 500 || NEVER_REPLAYED.has(status)) continue;
      response.headers = { ...response.headers, [IDEMPOTENT_REPLAYED_HEADER]: REPLAYED };
    }
  }
}
