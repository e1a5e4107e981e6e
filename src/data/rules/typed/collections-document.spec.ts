import SwaggerParser from '@apidevtools/swagger-parser';
import Ajv2020 from 'ajv/dist/2020';
import addFormats from 'ajv-formats';
import { typedCollectionOf, typedCollectionsDocument } from './collections-document';

const CONTEXT = { branch: '', limits: { listDefault: 50, listMax: 500 } };

const TODO_SCHEMA = {
  $schema: 'https://json-schema.org/draft/2020-12/schema',
  type: 'object',
  properties: {
    title: { type: 'string', minLength: 1 },
    done: { type: 'boolean' },
    priority: { type: 'integer' },
    address: { $ref: '#/$defs/Address' },
    sameAsTitle: { $ref: '#/properties/title' },
  },
  required: ['title'],
  additionalProperties: false,
  $defs: {
    Address: {
      type: 'object',
      properties: { city: { type: 'string' }, next: { $ref: '#/$defs/Address' } },
      required: ['city'],
    },
  },
};

type Doc = ReturnType<typeof typedCollectionsDocument>;

/** A validator for one component of the document, references resolved inside the document. */
function validatorOf(document: Doc, component: string) {
  const ajv = new Ajv2020({ strict: false });
  addFormats(ajv);
  ajv.addSchema(document, 'doc');
  const validate = ajv.getSchema(`doc#/components/schemas/${component}`);
  if (!validate) throw new Error(`no component ${component}`);
  return (value: unknown): boolean => validate(value) as boolean;
}

/** The value at a path of keys in the document (undefined where there is none). */
function dig(value: unknown, ...keys: (string | number)[]): unknown {
  let at = value;
  for (const key of keys) at = (at as Record<string, unknown> | undefined)?.[key];
  return at;
}

const schemas = (document: Doc) =>
  (document.components as { schemas: Record<string, Record<string, unknown>> }).schemas;

const STORED = {
  _id: '6660a1f29b1e8a00123456ab',
  _createdAt: '2026-01-05T10:00:00.000Z',
  _updatedAt: '2026-01-05T10:00:00.000Z',
  userId: 'auth0|ada',
  title: 'Write the report',
  done: false,
};

describe('typedCollectionsDocument', () => {
  const document = typedCollectionsDocument(
    [{ name: 'todos', schema: TODO_SCHEMA }, { name: 'notes' }],
    CONTEXT,
  );

  it('is a valid OpenAPI 3.1 document', async () => {
    expect(document.openapi).toBe('3.1.0');
    await expect(SwaggerParser.validate(structuredClone(document) as never)).resolves.toBeDefined();
  });

  it("types a stored item by the schema plus the service's fields", () => {
    const item = validatorOf(document, 'todos.Item');
    expect(item(STORED)).toBe(true);
    expect(item({ ...STORED, priority: 'high' })).toBe(false);
    expect(item({ ...STORED, title: undefined })).toBe(false);
    const { _id, ...withoutId } = STORED;
    expect(_id).toBeDefined();
    expect(item(withoutId)).toBe(false);
    expect(item({ ...STORED, _createdAt: 'yesterday' })).toBe(false);
    // The schema's additionalProperties: false still holds for the client's fields.
    expect(item({ ...STORED, colour: 'red' })).toBe(false);
  });

  it('types a create with its own _id and without the timestamps', () => {
    const newItem = validatorOf(document, 'todos.NewItem');
    expect(newItem({ title: 'a' })).toBe(true);
    expect(newItem({ _id: 'todo-1', title: 'a', done: true })).toBe(true);
    expect(newItem({ done: true })).toBe(false);
    expect(newItem({ title: 'a', _createdAt: '2026-01-05T10:00:00.000Z' })).toBe(false);
  });

  it("types update values as the schema's fields, each optional, at least one", () => {
    const values = validatorOf(document, 'todos.Values');
    expect(values({ done: true })).toBe(true);
    expect(values({})).toBe(false);
    expect(values({ done: 'yes' })).toBe(false);
    expect(values({ _id: 'other' })).toBe(false);
    expect(values({ colour: 'red' })).toBe(false);
  });

  it('makes $defs components and points references at them, recursion included', () => {
    const all = schemas(document);
    expect(all['todos.defs.Address']).toEqual({
      type: 'object',
      properties: {
        city: { type: 'string' },
        next: { $ref: '#/components/schemas/todos.defs.Address' },
      },
      required: ['city'],
    });
    expect(all['todos.Fields']).not.toHaveProperty('$defs');
    expect(all['todos.Fields']).not.toHaveProperty('$schema');
    expect((all['todos.Fields']?.properties as Record<string, unknown>).sameAsTitle).toEqual({
      $ref: '#/components/schemas/todos.Fields/properties/title',
    });
    const item = validatorOf(document, 'todos.Item');
    expect(item({ ...STORED, address: { city: 'Oslo', next: { city: 'Bergen' } } })).toBe(true);
    expect(item({ ...STORED, address: { city: 'Oslo', next: { town: 'Bergen' } } })).toBe(false);
    expect(item({ ...STORED, sameAsTitle: '' })).toBe(false);
  });

  it('points a reference to the root at the collection, and names odd definitions uniquely', () => {
    const tree = {
      type: 'object',
      properties: {
        children: { type: 'array', items: { $ref: '#' } },
        a: { $ref: '#/$defs/a%20b' },
        b: { $ref: '#/definitions/a_b' },
        c: { $ref: '#anchor' },
      },
      $defs: { 'a b': { type: 'string' } },
      definitions: { a_b: { type: 'number' } },
    };
    const all = schemas(typedCollectionsDocument([{ name: 'tree', schema: tree }], CONTEXT));
    const properties = all['tree.Fields']?.properties as Record<string, Record<string, unknown>>;
    expect(properties.children?.items).toEqual({ $ref: '#/components/schemas/tree.Fields' });
    expect(properties.a).toEqual({ $ref: '#/components/schemas/tree.defs.a_b' });
    expect(properties.b).toEqual({ $ref: '#/components/schemas/tree.defs.a_b_2' });
    expect(all['tree.defs.a_b']).toEqual({ type: 'string' });
    expect(all['tree.defs.a_b_2']).toEqual({ type: 'number' });
    // An anchor is not followed: any value, never a narrower type than the service accepts.
    expect(properties.c).toEqual({ $comment: expect.stringContaining('#anchor') });
  });

  it("keeps the service's fields the service's, whatever the schema says of them", () => {
    const schema = {
      type: 'object',
      properties: { _id: { type: 'integer' }, n: { type: 'number' } },
    };
    const item = validatorOf(
      typedCollectionsDocument([{ name: 'odd', schema }], CONTEXT),
      'odd.Item',
    );
    expect(item({ ...STORED, n: 1 })).toBe(true);
    expect(item({ ...STORED, _id: 7 })).toBe(false);
  });

  it('gives a collection without a schema the open item types', () => {
    const create = dig(document, 'paths', '/data/notes', 'post');
    expect(
      dig(create, 'requestBody', 'content', 'application/json', 'schema', 'properties', 'item'),
    ).toEqual({ $ref: '#/components/schemas/NewItem' });
    expect(schemas(document)).not.toHaveProperty(['notes.Item']);
    expect(validatorOf(document, 'Item')({ ...STORED, anything: [1] })).toBe(true);
  });

  it("has each collection's list, create and item routes with the service's answers", () => {
    const paths = document.paths as Record<string, object>;
    expect(Object.keys(paths)).toEqual([
      '/data/notes',
      '/data/notes/_id/{id}',
      '/data/todos',
      '/data/todos/_id/{id}',
    ]);
    expect(Object.keys(paths['/data/todos'] ?? {})).toEqual(['get', 'post']);
    expect(Object.keys(paths['/data/todos/_id/{id}'] ?? {})).toEqual([
      'parameters',
      'get',
      'put',
      'delete',
    ]);
    const list = dig(paths, '/data/todos', 'get', 'responses');
    expect(dig(list, 200, 'content', 'application/json', 'schema')).toEqual({
      type: 'array',
      items: { $ref: '#/components/schemas/todos.Item' },
    });
    expect(dig(list, 204, 'description')).toEqual(expect.any(String));
    const create = dig(paths, '/data/todos', 'post');
    expect(dig(create, 'operationId')).toBe('todos.create');
    expect(dig(create, 'responses', 200, 'headers', 'ETag')).toBeDefined();
    const update = dig(paths, '/data/todos/_id/{id}', 'put', 'requestBody', 'content');
    expect(dig(update, 'application/json', 'schema', 'properties', 'values')).toEqual({
      $ref: '#/components/schemas/todos.Values',
    });
    expect(dig(paths, '/data/todos/_id/{id}', 'delete', 'responses', 204)).toBeDefined();
  });

  it('takes q on the list of a collection with a search configuration only, and expand on lists and reads', async () => {
    const searched = typedCollectionsDocument(
      [{ name: 'todos', schema: TODO_SCHEMA, search: true }, { name: 'notes' }],
      CONTEXT,
    );
    const paths = searched.paths as Record<string, object>;
    const names = (...at: string[]) =>
      (dig(paths, ...at, 'parameters') as { $ref: string }[]).map((p) => p.$ref.split('/').pop());
    expect(names('/data/todos', 'get')).toEqual(expect.arrayContaining(['q', 'expand']));
    expect(names('/data/notes', 'get')).toContain('expand');
    expect(names('/data/notes', 'get')).not.toContain('q');
    for (const collection of ['todos', 'notes'])
      expect(names(`/data/${collection}/_id/{id}`, 'get')).toContain('expand');
    const parameters = dig(searched, 'components', 'parameters') as Record<string, object>;
    expect(parameters.q).toMatchObject({ name: 'q', in: 'query', schema: { type: 'string' } });
    expect(parameters.expand).toMatchObject({
      name: 'expand',
      in: 'query',
      schema: { type: 'string', pattern: expect.stringContaining(':') },
    });
    expect(dig(parameters, 'expand', 'description')).toMatch(/or `null`/);
    await expect(SwaggerParser.validate(structuredClone(searched) as never)).resolves.toBeDefined();
    // A search configuration changes the document, so its version.
    const version = (doc: Doc) => (doc.info as { version: string }).version;
    expect(version(searched)).not.toBe(version(document));
  });

  it('changes its version exactly when the document changes', () => {
    const again = typedCollectionsDocument(
      [{ name: 'notes' }, { name: 'todos', schema: TODO_SCHEMA }],
      CONTEXT,
    );
    const changed = typedCollectionsDocument(
      [{ name: 'todos', schema: { ...TODO_SCHEMA, required: [] } }, { name: 'notes' }],
      CONTEXT,
    );
    const version = (doc: Doc) => (doc.info as { version: string }).version;
    expect(version(again)).toBe(version(document));
    expect(version(changed)).not.toBe(version(document));
  });

  it('is a valid document for a namespace without collections', async () => {
    const empty = typedCollectionsDocument([], CONTEXT);
    expect(empty.paths).toEqual({});
    await expect(SwaggerParser.validate(structuredClone(empty) as never)).resolves.toBeDefined();
  });
});

describe('typedCollectionOf', () => {
  const changedAt = new Date();

  it("parses the entry's schema text", () => {
    const entry = { name: 'todos', rules: { schema: { text: '{"type":"object"}', changedAt } } };
    expect(typedCollectionOf(entry)).toEqual({ name: 'todos', schema: { type: 'object' } });
  });

  it('marks a collection with a search configuration', () => {
    const search = { fields: ['title'], minTokenLength: 2, version: 1, state: 'building' };
    expect(typedCollectionOf({ name: 'notes', rules: { search } })).toEqual({
      name: 'notes',
      search: true,
    });
  });

  it('leaves a collection without a schema, or with text that is no JSON, open', () => {
    expect(typedCollectionOf({ name: 'notes', rules: {} })).toEqual({ name: 'notes' });
    const broken = { name: 'x', rules: { schema: { text: '{', changedAt } } };
    expect(typedCollectionOf(broken)).toEqual({ name: 'x' });
  });
});
