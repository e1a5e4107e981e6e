import Ajv, { type ValidateFunction } from 'ajv';
import addFormats from 'ajv-formats';
import type { OpenAPIV3 } from 'openapi-types';
import { UNROUTED_RESPONSES } from '../../src/common/http/openapi-problems';

/** What the validator reads of a request and its response. */
export interface Exchange {
  method: string;
  /** Absolute or server-relative URL of the request. */
  url: string;
  status: number;
  headers: Record<string, string | string[] | undefined>;
  /** The raw body text ('' when there is none). */
  text: string;
  /** The parsed body (supertest parses JSON and +json media types). */
  body: unknown;
}

/**
 * Response headers the document must account for: when the service sends one, the response
 * documents it; a header a response documents as required must be sent.
 */
const TRACKED_HEADERS = [
  'x-request-id',
  'x-ratelimit-limit',
  'x-ratelimit-remaining',
  'x-ratelimit-reset',
  'retry-after',
  'link',
  'allow',
  'etag',
];

/**
 * Swagger UI, the document itself and the Prometheus metrics (the operator's, with their own
 * token) are served beside the API, not described by it.
 */
const UNDOCUMENTED_PATHS = /^\/(docs(-json|-yaml)?|metrics)(\/|$)/;

type Method = 'get' | 'put' | 'post' | 'delete' | 'patch';

interface Route {
  path: string;
  regex: RegExp;
  /** Literal segments count: /profile/groups beats /profile/{accountId}. */
  literals: number;
  item: OpenAPIV3.PathItemObject;
}

/**
 * OpenAPI 3.0 schema → JSON Schema for Ajv: `nullable` becomes a `null` type, `$ref`s point into
 * the document registered under `doc`, and (`closed`) object schemas that say nothing about
 * additional properties get `additionalProperties: false`, so an undocumented response member is
 * a finding rather than silently accepted.
 */
function toJsonSchema(schema: unknown, closed: boolean): unknown {
  if (Array.isArray(schema)) return schema.map((s) => toJsonSchema(s, closed));
  if (typeof schema !== 'object' || schema === null) return schema;
  const source = schema as Record<string, unknown>;
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(source)) {
    if (key === 'example' || key === 'examples' || key === 'nullable' || key === 'xml') continue;
    if (key === '$ref' && typeof value === 'string') out.$ref = `doc${value}`;
    else if (key === 'properties' || key === 'patternProperties') {
      out[key] = Object.fromEntries(
        Object.entries(value as Record<string, unknown>).map(([k, v]) => [
          k,
          toJsonSchema(v, closed),
        ]),
      );
    } else out[key] = toJsonSchema(value, closed);
  }
  if (
    closed &&
    out.type === 'object' &&
    out.properties !== undefined &&
    out.additionalProperties === undefined
  ) {
    out.additionalProperties = false;
  }
  if (source.nullable === true) {
    if (typeof out.type === 'string') {
      out.type = [out.type, 'null'];
      if (Array.isArray(out.enum)) out.enum = [...(out.enum as unknown[]), null];
    } else return { anyOf: [{ type: 'null' }, out] };
  }
  return out;
}

function headerValue(headers: Exchange['headers'], name: string): string | undefined {
  const value = headers[name];
  return Array.isArray(value) ? value.join(', ') : value;
}

/**
 * Checks responses against an OpenAPI 3.0 document: the status is documented for the operation,
 * the Content-Type is one of the documented media types (no body where none is documented), the
 * body validates against the media type's schema, and the tracked headers agree with the
 * response's documented headers.
 *
 * Requests outside the document follow fixed rules: /docs* (Swagger UI and the document) is
 * skipped; OPTIONS (CORS preflights, answered before routing) is skipped; any other request the
 * document does not list (an unknown path, or a listed path with another method) must be
 * answered like the `components.responses` entry UNROUTED_RESPONSES names for its status: 400,
 * 413 and 415 from the checks that run before routing, 404, and 405 (listed paths only; Express
 * answers a method no route has at all, such as PATCH, with 404).
 */
export class OpenApiResponseValidator {
  private readonly ajv: Ajv;
  private readonly routes: Route[];
  private readonly compiled = new Map<string, ValidateFunction>();

  constructor(private readonly document: OpenAPIV3.Document) {
    this.ajv = new Ajv({ strict: false, allErrors: true, validateFormats: true });
    addFormats(this.ajv);
    this.ajv.addSchema(
      { $id: 'doc', components: toJsonSchema(document.components ?? {}, true) },
      'doc',
    );
    this.routes = Object.entries(document.paths)
      .map(([path, item]) => {
        const segments = path.split('/').slice(1);
        const regex = new RegExp(
          `^/${segments
            .map((s) => (/^\{.+\}$/.test(s) ? '[^/]+' : s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')))
            .join('/')}/?$`,
        );
        const literals = segments.filter((s) => !s.startsWith('{')).length;
        return { path, regex, literals, item: item! };
      })
      .sort((a, b) => b.literals - a.literals);
  }

  /** Every way `exchange` disagrees with the document ([] when it agrees or is out of scope). */
  check(exchange: Exchange): string[] {
    const method = exchange.method.toLowerCase();
    const path = new URL(exchange.url, 'http://localhost').pathname;
    if (UNDOCUMENTED_PATHS.test(path)) return [];
    if (method === 'options') return [];

    const lookup = method === 'head' ? 'get' : method;
    const candidates = this.routes.filter((r) => r.regex.test(path));
    // As OpenAPI matches paths: the most concrete ones first (GET /profile/groups is not
    // GET /profile/{accountId}).
    const route = candidates
      .filter((r) => r.literals === candidates[0]?.literals)
      .find((r) => r.item[lookup as Method]);
    const where = `${exchange.method.toUpperCase()} ${path} → ${exchange.status}`;
    if (!route) {
      // 405 only where the path is listed; Express answers a method it has no route for at all
      // (PATCH) with 404 like an unlisted path.
      const unrouted = UNROUTED_RESPONSES[exchange.status];
      if (!unrouted || (exchange.status === 405 && candidates.length === 0)) {
        return [
          `${where}: the path is ${candidates.length > 0 ? 'listed without this method' : 'not listed'}; the answers for that are ${Object.keys(UNROUTED_RESPONSES).join(', ')} (components.responses)`,
        ];
      }
      const response = this.document.components!.responses![
        unrouted.name
      ] as OpenAPIV3.ResponseObject;
      return this.checkResponse(
        `#/components/responses/${unrouted.name}`,
        response,
        exchange,
        where,
      );
    }
    const operation = route.item[lookup as Method]!;
    const response = (operation.responses[String(exchange.status)] ??
      operation.responses.default) as OpenAPIV3.ResponseObject | undefined;
    if (!response) {
      return [
        `${where}: status not documented for ${operation.operationId} (documented: ${Object.keys(operation.responses).join(', ')})`,
      ];
    }
    const pointer = `#/paths/${route.path.replace(/~/g, '~0').replace(/\//g, '~1')}/${lookup}/responses/${exchange.status}`;
    return this.checkResponse(pointer, response, exchange, where, method === 'head');
  }

  private checkResponse(
    pointer: string,
    response: OpenAPIV3.ResponseObject,
    exchange: Exchange,
    where: string,
    headOnly = false,
  ): string[] {
    const findings: string[] = [];
    const documentedHeaders = Object.fromEntries(
      Object.entries(response.headers ?? {}).map(([k, v]) => [
        k.toLowerCase(),
        v as OpenAPIV3.HeaderObject,
      ]),
    );
    for (const name of TRACKED_HEADERS) {
      const sent = headerValue(exchange.headers, name) !== undefined;
      const documented = documentedHeaders[name];
      if (sent && !documented) findings.push(`${where}: sends ${name}, not documented`);
      if (!sent && documented?.required) findings.push(`${where}: documents ${name} but omits it`);
    }

    const contentType = headerValue(exchange.headers, 'content-type')?.split(';')[0]?.trim();
    const content = response.content ?? {};
    // NDJSON is read as text by the tests' parser (ndjson.ts), which reads problems as text too;
    // each NDJSON line is checked on its own.
    const ndjson = contentType === 'application/x-ndjson';
    // Bytes (a download, or a problem read by a byte parser) are read as text where JSON.
    const bytes = Buffer.isBuffer(exchange.body) ? exchange.body : null;
    const asText =
      typeof exchange.body === 'string' || (bytes !== null && /json/.test(contentType ?? ''));
    const text = bytes
      ? bytes.length === 0
        ? ''
        : asText
          ? bytes.toString('utf8')
          : '(bytes)'
      : asText
        ? (exchange.body as string)
        : exchange.text;
    const hasBody = text !== '' && text !== undefined;
    const body: unknown = asText && !ndjson && hasBody ? JSON.parse(text) : exchange.body;
    if (headOnly) return findings;
    if (Object.keys(content).length === 0) {
      if (hasBody) findings.push(`${where}: sends a body (${contentType}), none documented`);
      return findings;
    }
    // Bytes may be none at all (an empty file).
    const binary = Object.values(content).some(
      (media) => (media.schema as { format?: string } | undefined)?.format === 'binary',
    );
    if (!hasBody && !binary) {
      findings.push(`${where}: sends no body, documented: ${Object.keys(content).join(', ')}`);
      return findings;
    }
    if (!hasBody) return findings;
    // A download documents `*/*`: any type, the file's own.
    const documentedType = contentType && content[contentType] ? contentType : '*/*';
    if (!contentType || !content[documentedType]) {
      findings.push(
        `${where}: Content-Type ${contentType}, documented: ${Object.keys(content).join(', ')}`,
      );
      return findings;
    }
    const schema = content[documentedType].schema;
    if (!schema || (schema as { format?: string }).format === 'binary') return findings;
    const key = `${pointer}/${contentType}`;
    let validate = this.compiled.get(key);
    if (!validate) {
      validate = this.ajv.compile(toJsonSchema(schema, true) as object);
      this.compiled.set(key, validate);
    }
    if (ndjson) {
      text.split('\n').forEach((line, i) => {
        if (line === '' || validate(JSON.parse(line))) return;
        const errors = (validate.errors ?? [])
          .slice(0, 5)
          .map((e) => `${e.instancePath} ${e.message ?? ''}`);
        findings.push(
          `${where}: line ${i + 1} does not match ${pointer}: ${errors.join('; ')}; line: ${line.slice(0, 300)}`,
        );
      });
      return findings;
    }
    if (!validate(body)) {
      const errors = (validate.errors ?? [])
        .slice(0, 5)
        .map(
          (e) =>
            `${e.instancePath || '(body)'} ${e.message ?? ''}${e.keyword === 'additionalProperties' ? `: ${JSON.stringify(e.params)}` : ''}`,
        );
      findings.push(
        `${where}: body does not match ${pointer} (${contentType}): ${errors.join('; ')}; body: ${exchange.text.slice(0, 300)}`,
      );
    }
    return findings;
  }
}
