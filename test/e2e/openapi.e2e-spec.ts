import SwaggerParser from '@apidevtools/swagger-parser';
import type { OpenAPIV3 } from 'openapi-types';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { ERROR_CATALOG } from '../../src/error-catalog';
import { createTestApp, type TestApp } from '../support/app';
import { servedRoutes } from '../support/served-routes';
import { OpenApiResponseValidator } from '../support/openapi-validator';

const METHODS = ['get', 'put', 'post', 'delete', 'patch'] as const;

type Operation = OpenAPIV3.OperationObject;

function operationsOf(document: OpenAPIV3.Document): [string, string, Operation][] {
  return Object.entries(document.paths).flatMap(([path, item]) =>
    METHODS.flatMap((m) => (item?.[m] ? [[path, m, item[m]] as [string, string, Operation]] : [])),
  );
}

function responsesOf(operation: Operation): [string, OpenAPIV3.ResponseObject][] {
  return Object.entries(operation.responses) as [string, OpenAPIV3.ResponseObject][];
}

function parameter(operation: Operation, name: string): OpenAPIV3.ParameterObject | undefined {
  return (operation.parameters as OpenAPIV3.ParameterObject[] | undefined)?.find(
    (p) => p.name === name,
  );
}

function schemaOf(document: OpenAPIV3.Document, name: string): OpenAPIV3.SchemaObject {
  return document.components!.schemas![name] as OpenAPIV3.SchemaObject;
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
        if (path === '/file-links/{token}') {
          // A signed link is its own credential: no key, but a rate limit per address.
          expect(operation.security).toBeUndefined();
          expect(Object.keys(operation.responses)).toEqual(
            expect.arrayContaining(['200', '206', '304', '403', '404', '410', '416', '429']),
          );
          continue;
        }
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

  it('gives every problem response examples with its own status and a code of that status', () => {
    for (const [path, method, operation] of operationsOf(document)) {
      for (const [status, response] of responsesOf(operation)) {
        const media = response.content?.['application/problem+json'];
        if (Number(status) < 400) continue;
        expect({ path, method, status, media: !!media }).toEqual({
          path,
          method,
          status,
          media: true,
        });
        const examples = Object.values(media!.examples ?? {}) as {
          value: Record<string, unknown>;
        }[];
        expect(examples.length).toBeGreaterThan(0);
        for (const { value } of examples) {
          const code = value.code as keyof typeof ERROR_CATALOG;
          expect({ path, method, status: value.status, title: value.title }).toEqual({
            path,
            method,
            status: Number(status),
            title: ERROR_CATALOG[code].title,
          });
        }
      }
    }
  });

  it("allows X-Branch '' and documents INVALID_BRANCH and BRANCH_MISMATCH wherever it is taken", () => {
    let count = 0;
    for (const [, , operation] of operationsOf(document)) {
      const branch = parameter(operation, 'X-Branch');
      if (!branch) continue;
      count += 1;
      const pattern = new RegExp((branch.schema as OpenAPIV3.SchemaObject).pattern!);
      expect(['', 'main', 'feature.x-1'].every((b) => pattern.test(b))).toBe(true);
      expect(['Main', '-x', ' '].some((b) => pattern.test(b))).toBe(false);
      const codes = (status: string) =>
        Object.keys(
          (operation.responses[status] as OpenAPIV3.ResponseObject).content![
            'application/problem+json'
          ]!.examples!,
        );
      expect(codes('400')).toContain('INVALID_BRANCH');
      expect(codes('403')).toContain('BRANCH_MISMATCH');
      const forbidden = (operation.responses['403'] as OpenAPIV3.ResponseObject).description;
      expect(forbidden.split('BRANCH_MISMATCH').length).toBe(2);
    }
    expect(count).toBeGreaterThan(10);
  });

  it('states constraints as schema', () => {
    const listItems = document.paths['/data/{collection}']!.get!;
    expect(parameter(listItems, 'collection')?.schema).toMatchObject({
      pattern: '^[A-Za-z][A-Za-z0-9_-]{0,63}$',
    });
    expect(schemaOf(document, 'UpdateProjectDto').minProperties).toBe(1);
    expect(schemaOf(document, 'CreateDataIndexDto').oneOf).toHaveLength(2);
    expect(schemaOf(document, 'CreateUserDto').properties!.subject).toMatchObject({
      pattern: expect.any(String),
    });
    for (const name of ['accountId', 'clientId']) {
      const pattern = (
        schemaOf(document, 'CreateSubProfileDto').properties![name] as OpenAPIV3.SchemaObject
      ).pattern!;
      expect(new RegExp(pattern, 'u').test('acct-42')).toBe(true);
      expect(new RegExp(pattern, 'u').test('has space')).toBe(false);
      expect(new RegExp(pattern, 'u').test('')).toBe(false);
    }
    expect(schemaOf(document, 'ProfileGroupDto').properties!.group).toMatchObject({
      pattern: expect.any(String),
    });
  });

  it('closes every request body schema and keeps server defaults out of it', () => {
    let bodies = 0;
    for (const [path, method, operation] of operationsOf(document)) {
      const body = operation.requestBody as OpenAPIV3.RequestBodyObject | undefined;
      if (!body) continue;
      // POST /import streams NDJSON records, which are open by their format's rule (new optional
      // members are ignored): its body is checked below.
      if (body.content['application/x-ndjson']) continue;
      // POST /files takes the file's bytes, of any type.
      if (body.content['application/octet-stream']) continue;
      bodies += 1;
      const ref = body.content['application/json']!.schema as
        OpenAPIV3.ReferenceObject | OpenAPIV3.ArraySchemaObject;
      const target = '$ref' in ref ? ref.$ref : (ref.items as OpenAPIV3.ReferenceObject).$ref;
      const schema = schemaOf(document, target.split('/').pop()!);
      expect({ path, method, additionalProperties: schema.additionalProperties }).toEqual({
        path,
        method,
        additionalProperties: false,
      });
      for (const [name, property] of Object.entries(schema.properties ?? {})) {
        expect({ path, name, default: (property as OpenAPIV3.SchemaObject).default }).toEqual({
          path,
          name,
          default: undefined,
        });
      }
    }
    expect(bodies).toBeGreaterThan(10);
    expect(
      Object.keys(
        (document.paths['/import']!.post!.requestBody as OpenAPIV3.RequestBodyObject).content,
      ),
    ).toEqual(['application/x-ndjson']);
    // The one body that may be left out entirely.
    expect(document.paths['/api-keys']!.post!.requestBody).toMatchObject({ required: false });
    expect(schemaOf(document, 'CreateDataItemDto').required).toEqual(['item']);
    expect(schemaOf(document, 'CreateDataIndexDto').required ?? []).toEqual([]);
    expect(schemaOf(document, 'DataItemDto').additionalProperties).toBe(true);
  });

  it('types the free-form query parameters as strings', () => {
    const listProjects = document.paths['/project']!.get!;
    for (const name of ['name', 'tag', 'filter[name]', 'filter[tag]']) {
      expect(parameter(listProjects, name)?.schema).toMatchObject({ type: 'string' });
    }
    expect(
      parameter(document.paths['/data/{collection}']!.get!, 'authField')?.schema,
    ).toMatchObject({ type: 'string' });
  });

  it('describes the opaque bearer key, the version, the server and the response headers', () => {
    const pkg = JSON.parse(readFileSync(join(__dirname, '../../package.json'), 'utf8')) as {
      version: string;
    };
    expect(document.info.version).toBe(pkg.version);
    expect(document.servers).toEqual([{ url: '/' }]);
    expect(document.components!.securitySchemes!.bearer).not.toHaveProperty('bearerFormat');
    for (const [path, method, operation] of operationsOf(document)) {
      for (const [status, response] of responsesOf(operation)) {
        const headers = Object.keys(response.headers ?? {});
        expect({ path, method, status, headers }).toEqual({
          path,
          method,
          status,
          headers: expect.arrayContaining([
            'X-Request-Id',
            ...(operation.security?.length && status === '200' ? ['X-RateLimit-Limit'] : []),
            ...(status === '429' || status === '503' ? ['Retry-After'] : []),
          ]),
        });
      }
    }
    for (const path of ['/project', '/data/{collection}']) {
      expect(document.paths[path]!.get!.responses['200']).toHaveProperty('headers.Link');
    }
    expect(document.components!.responses!.MethodNotAllowed).toHaveProperty('headers.Allow');
  });

  it('checks responses: undocumented statuses, media types, bodies and headers are findings', () => {
    const validator = new OpenApiResponseValidator(document);
    const exchange = {
      method: 'GET',
      url: '/project/665f1c2a9b1e8a0012345678',
      status: 200,
      headers: {
        'x-request-id': 'r',
        'content-type': 'application/json',
        'x-ratelimit-limit': '1',
        'x-ratelimit-remaining': '0',
        'x-ratelimit-reset': '1',
      },
      text: '{}',
      body: {},
    };
    expect(validator.check(exchange).join()).toMatch(/must have required property/);
    expect(validator.check({ ...exchange, status: 418 }).join()).toMatch(/status not documented/);
    expect(validator.check({ ...exchange, status: 404 }).join()).toMatch(/Content-Type/);
    expect(validator.check({ ...exchange, method: 'PATCH', status: 200 }).join()).toMatch(
      /listed without this method/,
    );
    expect(validator.check({ ...exchange, url: '/nowhere', status: 404 }).join()).toMatch(
      /sends no body|Content-Type/,
    );
    expect(validator.check({ ...exchange, url: '/docs/swagger-ui.css' })).toEqual([]);
  });

  it('serves Swagger UI at /docs', async () => {
    const res = await t.http().get('/docs').redirects(1).expect(200);
    expect(res.text).toContain('swagger-ui');
  });
});
