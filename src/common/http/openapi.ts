import type { INestApplication } from '@nestjs/common';
import { DocumentBuilder, SwaggerModule, type OpenAPIObject } from '@nestjs/swagger';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { addLinks } from './openapi-links';
import { addSharedSchemas } from './openapi-schemas';
import { addConditionalRequests } from './openapi-conditional';
import {
  addStandardProblems,
  addStandardResponses,
  type DocumentedCatalog,
} from './openapi-problems';
import {
  API_KEY_SCHEME,
  applyRequestBodyContent,
  AUTH_HEADERS_FIRST,
  BEARER_SCHEME,
  BRANCH_HEADER,
  header,
  HEADERS,
  writesItems,
  PROBLEM_SCHEMA,
  problemResponse,
  REQUIRED_SCOPE_EXTENSION,
  TEAM_HEADER,
  operations,
  type MediaType,
  type Response,
  type Schema,
} from './openapi-shared';

/**
 * Schema keywords a class-level decorator adds to the DTO's component schema, for rules the
 * plugin cannot derive from one property (`minProperties`, `additionalProperties`).
 */
const schemaPatches = new Map<string, Schema>();
export function ApiSchemaPatch(patch: Record<string, unknown>): ClassDecorator {
  return (target) => {
    schemaPatches.set(target.name, { ...schemaPatches.get(target.name), ...patch });
  };
}

/** Moves the authentication headers of operations marked by @AuthHeadersFirst to the front. */
function listAuthHeadersFirst(document: OpenAPIObject): void {
  const isAuthHeader = (p: object): boolean =>
    'in' in p &&
    p.in === 'header' &&
    'name' in p &&
    (p.name === BRANCH_HEADER || p.name === TEAM_HEADER);
  for (const [, , operation] of operations(document)) {
    const marked = operation as unknown as Record<string, unknown>;
    if (marked[AUTH_HEADERS_FIRST] !== true) continue;
    delete marked[AUTH_HEADERS_FIRST];
    const parameters = operation.parameters ?? [];
    operation.parameters = [
      ...parameters.filter(isAuthHeader),
      ...parameters.filter((p) => !isAuthHeader(p)),
    ];
  }
}

/**
 * Says in each operation that needs a scope which one: its `x-required-scope` stays, its 403
 * names INSUFFICIENT_SCOPE with the scope, and WWW-Authenticate, which that refusal carries.
 * Operations that need none lose the extension's null.
 */
function describeRequiredScopes(document: OpenAPIObject): void {
  for (const [, , operation] of operations(document)) {
    const marked = operation as unknown as Record<string, unknown>;
    const scope = marked[REQUIRED_SCOPE_EXTENSION];
    if (typeof scope !== 'string') {
      delete marked[REQUIRED_SCOPE_EXTENSION];
      continue;
    }
    // Class-level decorators share response objects between a controller's operations.
    operation.responses = structuredClone(operation.responses);
    const responses = operation.responses as Record<string, Response>;
    const forbidden = (responses['403'] ??= problemResponse('Forbidden'));
    forbidden.description += `; INSUFFICIENT_SCOPE: the key holds neither the scope \`${scope}\` this operation needs nor one that includes it (WWW-Authenticate names it)`;
    forbidden.headers = {
      ...forbidden.headers,
      'WWW-Authenticate': header(
        `With INSUFFICIENT_SCOPE: \`Bearer error="insufficient_scope", scope="${scope}"\` (RFC 6750)`,
        { type: 'string' },
        false,
      ),
    };
  }
}

/** The extension a public operation carries when the rate limit applies to it per address. */
export const RATE_LIMITED_BY_ADDRESS = 'x-rate-limited-by-address';

/**
 * Response headers where the service sends them: X-Request-Id on every response; the key's rate
 * limit on every response of an authenticated operation that got past the limiter (always on
 * success, possibly on errors); Retry-After on 429 and 503; Link on list pages.
 */
function addResponseHeaders(document: OpenAPIObject): void {
  for (const [path, method, operation] of operations(document)) {
    // A public route that is rate limited all the same, per client address (signed file links).
    const byAddress =
      (operation as unknown as Record<string, unknown>)[RATE_LIMITED_BY_ADDRESS] === true;
    delete (operation as unknown as Record<string, unknown>)[RATE_LIMITED_BY_ADDRESS];
    const secured = (operation.security ?? []).length > 0 || byAddress;
    for (const [status, response] of Object.entries(
      operation.responses as Record<string, Response>,
    )) {
      const success = status.startsWith('2');
      const headers: Record<string, unknown> = {
        ...response.headers,
        'X-Request-Id': HEADERS.requestId,
      };
      // Body and query problems are answered before the limiter runs; a 413 of a route that
      // writes items can also be TOO_MANY_WORDS, answered after it, and an import's body is
      // sized against its tenant's limit once the key is known.
      const sizedAfterAuth = writesItems(path, method) || (path === '/import' && method === 'post');
      const beforeLimiter = status === '415' || (status === '413' && !sizedAfterAuth);
      if (secured && !beforeLimiter) {
        headers['X-RateLimit-Limit'] = HEADERS.limit(success);
        headers['X-RateLimit-Remaining'] = HEADERS.remaining(success);
        headers['X-RateLimit-Reset'] = HEADERS.reset(success);
      }
      if (status === '429' || status === '503') headers['Retry-After'] = HEADERS.retryAfter;
      if (status === '200' && method === 'get' && isList(response)) headers.Link = HEADERS.link;
      if (success && writesItems(path, method)) headers['Schema-Warnings'] = HEADERS.schemaWarnings;
      response.headers = headers;
    }
  }
}

function isList(response: Response): boolean {
  return response.content?.['application/json']?.schema?.type === 'array';
}

function resolve(document: OpenAPIObject, schema: Schema | undefined): Schema | undefined {
  if (!schema) return undefined;
  const ref = schema.$ref ?? (schema.type === 'array' ? schema.items?.$ref : undefined);
  if (!ref?.startsWith('#/components/schemas/')) return undefined;
  return document.components?.schemas?.[ref.slice('#/components/schemas/'.length)] as
    Schema | undefined;
}

/**
 * Request bodies are closed: the validation pipe refuses unknown members, so the body schemas say
 * `additionalProperties: false`. A `default` of a body member is the server's behaviour when the
 * member is absent, not a value clients must send; generators would make such members required,
 * so it moves into the description.
 */
function closeRequestBodies(document: OpenAPIObject): void {
  const done = new Set<Schema>();
  for (const [, , operation] of operations(document)) {
    const body = operation.requestBody as { content?: Record<string, MediaType> } | undefined;
    const schema = resolve(document, body?.content?.['application/json']?.schema);
    if (!schema || done.has(schema)) continue;
    done.add(schema);
    schema.additionalProperties ??= false;
    for (const property of Object.values(schema.properties ?? {})) {
      if (!('default' in property)) continue;
      if (/\bdefault\b/i.test(property.description ?? '')) {
        delete property.default;
        continue;
      }
      const text = `Default: \`${JSON.stringify(property.default)}\`.`;
      property.description = property.description ? `${property.description} ${text}` : text;
      delete property.default;
    }
  }
}

function patchSchemas(document: OpenAPIObject, catalog: DocumentedCatalog): void {
  const schemas = (document.components?.schemas ?? {}) as Record<string, Schema>;
  for (const [name, patch] of schemaPatches) {
    if (schemas[name]) Object.assign(schemas[name], patch);
  }
  const problem = schemas[PROBLEM_SCHEMA];
  if (problem?.properties) {
    // Every code of the API, in the catalog's order (common cannot name the modules' codes).
    const { type, ...code } = problem.properties.code ?? {};
    problem.properties.code = { type, enum: Object.keys(catalog), ...code };
    // RFC 9457 extension members the service adds to some problems.
    problem.properties.existingId = {
      type: 'string',
      description:
        'The existing resource (PROFILE_EXISTS, DUPLICATE_ITEM; MOVE_RUNNING: the move; ERASURE_RUNNING: the erasure)',
      example: '665f1c2a9b1e8a0012345678',
    };
    problem.properties.itemId = {
      type: 'string',
      description:
        'SCHEMA_VIOLATION of a multi-item update: the matched item that would break the schema (none was written)',
      example: '665f1c2a9b1e8a0012345678',
    };
    problem.properties.profiles = {
      type: 'integer',
      description: 'PLAN_IN_USE: how many users hold the plan',
      example: 2,
    };
    problem.properties.teams = {
      type: 'integer',
      description: 'PLAN_IN_USE: how many teams hold the plan',
      example: 0,
    };
    // A refusal at a limit (PLAN_LIMIT_EXCEEDED, and the deployment's quota codes).
    problem.properties.limit = {
      type: 'string',
      description:
        'PLAN_LIMIT_EXCEEDED and the quota codes: which limit the write would pass (collections, indexesPerCollection, itemsPerCollection, fileBytes, webhooks, importBytes; docs/plans.md)',
      example: 'collections',
    };
    problem.properties.max = {
      type: 'integer',
      description: 'PLAN_LIMIT_EXCEEDED and the quota codes: the value of that limit',
      example: 20,
    };
    problem.properties.usage = {
      type: 'integer',
      description: 'PLAN_LIMIT_EXCEEDED and the quota codes: what was used before the write',
      example: 20,
    };
    problem.properties.plan = {
      type: 'string',
      nullable: true,
      description:
        "PLAN_LIMIT_EXCEEDED: the tenant's active plan; null with the quota codes (the deployment's limits)",
      example: 'starter',
    };
  }
}

/** package.json's version; the file sits three levels above this one in src/ and in dist/. */
function packageVersion(): string {
  try {
    const pkg = JSON.parse(readFileSync(join(__dirname, '../../../package.json'), 'utf8')) as {
      version?: unknown;
    };
    return typeof pkg.version === 'string' ? pkg.version : '0.0.0';
  } catch {
    return '0.0.0';
  }
}

/**
 * The served OpenAPI document. `catalog` is every error code of the API (src/error-catalog.ts):
 * the problems' `code` enum and the examples of the codes responses name. `additions` are what
 * the modules of cross-cutting concerns add to the operations they apply to (headers, problems),
 * applied in their order after the standard problems and before the response headers.
 */
export function buildOpenApiDocument(
  app: INestApplication,
  catalog: DocumentedCatalog,
  additions: readonly ((document: OpenAPIObject) => void)[] = [],
): OpenAPIObject {
  const config = new DocumentBuilder()
    .setTitle('Profile, project and data service')
    .setDescription(
      [
        'Profiles (root and sub), projects and per-tenant data collections on MongoDB.',
        '',
        'Authenticate with `X-Api-Key: <key>` (or `Authorization: Bearer <key>`). The operator key',
        '(ADMIN_API_KEY) creates users and teams under `/admin`; users manage their keys under `/api-keys`.',
        '',
        'Every error is an RFC 9457 problem (`application/problem+json`) with a stable `code` and a `traceId`',
        '(the request id, also sent as `X-Request-Id`; the W3C trace id when the service traces requests). `X-Branch` selects the context branch when the key is not bound to one.',
      ].join('\n'),
    )
    .setVersion(packageVersion())
    .addServer('/')
    .addApiKey(
      { type: 'apiKey', in: 'header', name: 'X-Api-Key', description: 'API key' },
      API_KEY_SCHEME,
    )
    .addBearerAuth(
      {
        type: 'http',
        scheme: 'bearer',
        description:
          'The same API key as a bearer token, or (with OIDC_ISSUERS) an access token of a trusted identity provider: a JWT, told apart by its shape (docs/authentication.md, "Access tokens: what is checked")',
      },
      BEARER_SCHEME,
    )
    .build();
  // The keys are opaque random strings, not JWTs (addBearerAuth's default format).
  const bearer = config.components?.securitySchemes?.[BEARER_SCHEME] as { bearerFormat?: string };
  delete bearer.bearerFormat;
  const document = SwaggerModule.createDocument(app, config, {
    operationIdFactory: (_controllerKey: string, methodKey: string) => methodKey,
  });
  listAuthHeadersFirst(document);
  describeRequiredScopes(document);
  applyRequestBodyContent(document);
  addConditionalRequests(document);
  addStandardProblems(document, catalog);
  for (const add of additions) add(document);
  addResponseHeaders(document);
  addLinks(document);
  addSharedSchemas(document);
  closeRequestBodies(document);
  patchSchemas(document, catalog);
  addStandardResponses(document);
  return document;
}
