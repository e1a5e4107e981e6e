import SwaggerParser from '@apidevtools/swagger-parser';
import type { OpenAPIV3 } from 'openapi-types';
import { createTestApp, type TestApp } from '../support/app';

interface ExpressLayer {
  route?: { path: string; methods: Record<string, boolean> };
}

/** Every route Express really serves, as "METHOD /path/{param}", apart from the docs themselves. */
function servedRoutes(t: TestApp): string[] {
  const express = t.app.getHttpAdapter().getInstance() as { router: { stack: ExpressLayer[] } };
  const routes = express.router.stack.flatMap((layer) =>
    layer.route
      ? Object.keys(layer.route.methods).map(
          (method) =>
            `${method.toUpperCase()} ${layer.route!.path.replace(/:([A-Za-z0-9_]+)/g, '{$1}').replace(/(.)\/$/, '$1')}`,
        )
      : [],
  );
  // Nest mounts module middleware as routes too: on a catch-all path, or on the paths of the
  // controllers it serves, which the Set folds into their endpoints.
  return [...new Set(routes)]
    .filter((route) => !/ \/docs/.test(route) && !route.includes('{*path}'))
    .sort();
}

describe('OpenAPI document', () => {
  let t: TestApp;
  let document: OpenAPIV3.Document;

  beforeAll(async () => {
    t = await createTestApp(__filename);
    const res = await t.http().get('/docs-json').expect(200);
    document = res.body;
  });

  afterAll(async () => {
    await t.close();
  });

  it('is a valid OpenAPI 3 document', async () => {
    expect(document.openapi).toMatch(/^3\./);
    await expect(SwaggerParser.validate(structuredClone(document) as never)).resolves.toBeDefined();
  });

  it('documents every route the app serves, and nothing else', () => {
    const documented = Object.entries(document.paths)
      .flatMap(([path, item]) =>
        (['get', 'put', 'post', 'delete', 'patch'] as const)
          .filter((m) => item?.[m])
          .map((m) => `${m.toUpperCase()} ${path}`),
      )
      .sort();
    expect(documented).toEqual(servedRoutes(t));
  });

  it('uses handler names as unique operationIds', () => {
    const ids = Object.values(document.paths).flatMap((item) =>
      (['get', 'put', 'post', 'delete', 'patch'] as const).flatMap((m) =>
        item?.[m] ? [item[m].operationId] : [],
      ),
    );
    expect(ids.every((id) => typeof id === 'string' && /^[a-z][A-Za-z]+$/.test(id))).toBe(true);
    expect(new Set(ids).size).toBe(ids.length);
  });

  it('declares both security schemes and secures every non-public operation', () => {
    expect(document.components?.securitySchemes).toMatchObject({
      apiKey: { type: 'apiKey', in: 'header', name: 'X-Api-Key' },
      bearer: { type: 'http', scheme: 'bearer' },
    });
    for (const [path, item] of Object.entries(document.paths)) {
      for (const method of ['get', 'put', 'post', 'delete', 'patch'] as const) {
        const operation = item?.[method];
        if (!operation || path.startsWith('/health')) continue;
        expect({ path, method, security: operation.security }).toEqual({
          path,
          method,
          security: expect.arrayContaining([{ apiKey: [] }, { bearer: [] }]),
        });
        expect(Object.keys(operation.responses)).toEqual(
          expect.arrayContaining(['401', '403', '429', '500', '503']),
        );
      }
    }
  });

  it('documents problem responses as application/problem+json', () => {
    const response = document.paths['/api-keys']?.get?.responses['401'] as OpenAPIV3.ResponseObject;
    expect(response.content?.['application/problem+json']?.schema).toEqual({
      $ref: '#/components/schemas/ProblemDto',
    });
  });

  it('serves Swagger UI at /docs', async () => {
    const res = await t.http().get('/docs').redirects(1).expect(200);
    expect(res.text).toContain('swagger-ui');
  });
});
