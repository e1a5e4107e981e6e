import type { INestApplication } from '@nestjs/common';
import { DocumentBuilder, SwaggerModule, type OpenAPIObject } from '@nestjs/swagger';
import { ERROR_CATALOG } from '../errors';

/** Names of the two security schemes (X-Api-Key header, Bearer token) in the document. */
export const API_KEY_SCHEME = 'apiKey';
export const BEARER_SCHEME = 'bearer';

type Operation = NonNullable<OpenAPIObject['paths'][string]['get']>;
const METHODS = ['get', 'put', 'post', 'delete', 'patch'] as const;
const PROBLEM_REF = '#/components/schemas/ProblemDto';

function problemResponse(description: string): Operation['responses'][string] {
  return {
    description,
    content: { 'application/problem+json': { schema: { $ref: PROBLEM_REF } } },
  };
}

/**
 * Adds the problems every operation can return (so no operation documents only its happy path)
 * and moves problem schemas to the application/problem+json media type the API really sends.
 */
export function addStandardProblems(document: OpenAPIObject): OpenAPIObject {
  for (const item of Object.values(document.paths)) {
    for (const method of METHODS) {
      const operation = item[method];
      if (!operation) continue;
      const responses = operation.responses;
      for (const response of Object.values(responses)) {
        const content = (response as { content?: Record<string, { schema?: { $ref?: string } }> })
          .content;
        const json = content?.['application/json'];
        if (content && json?.schema?.$ref === PROBLEM_REF) {
          content['application/problem+json'] = json;
          delete content['application/json'];
        }
      }
      const standard: Record<string, string> = {
        // Every route refuses prototype-named query keys (__proto__, constructor, prototype).
        '400': `${ERROR_CATALOG.VALIDATION_FAILED.title} (VALIDATION_FAILED)`,
        '500': ERROR_CATALOG.INTERNAL_ERROR.title,
        '503': `${ERROR_CATALOG.DATABASE_UNAVAILABLE.title} (with Retry-After)`,
      };
      if (operation.requestBody) {
        standard['400'] =
          `${ERROR_CATALOG.VALIDATION_FAILED.title} (VALIDATION_FAILED, MALFORMED_JSON, or INVALID_CONTENT_ENCODING for a body that does not decode)`;
        standard['413'] = ERROR_CATALOG.PAYLOAD_TOO_LARGE.title;
        standard['415'] =
          `${ERROR_CATALOG.UNSUPPORTED_MEDIA_TYPE.title}, with gzip, deflate, br or no Content-Encoding (UNSUPPORTED_MEDIA_TYPE, UNSUPPORTED_CONTENT_ENCODING)`;
      }
      for (const [status, description] of Object.entries(standard)) {
        responses[status] ??= problemResponse(description);
      }
    }
  }
  return document;
}

export function buildOpenApiDocument(app: INestApplication): OpenAPIObject {
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
        '(the request id, also sent as `X-Request-Id`). `X-Branch` selects the context branch when the key is not bound to one.',
      ].join('\n'),
    )
    .setVersion('1.0.0')
    .addApiKey(
      { type: 'apiKey', in: 'header', name: 'X-Api-Key', description: 'API key' },
      API_KEY_SCHEME,
    )
    .addBearerAuth(
      { type: 'http', scheme: 'bearer', description: 'The same API key as a bearer token' },
      BEARER_SCHEME,
    )
    .build();
  const document = SwaggerModule.createDocument(app, config, {
    operationIdFactory: (_controllerKey: string, methodKey: string) => methodKey,
  });
  return addStandardProblems(document);
}
