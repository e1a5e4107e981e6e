import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import Ajv2020 from 'ajv/dist/2020';
import addFormats from 'ajv-formats';
import { createTestApp, type TestApp } from '../support/app';
import {
  addTeamMember,
  createSubKey,
  createTeam,
  createUser,
  type TestTeam,
  type TestUser,
} from '../support/factories';
import { anonymous, as, type Client } from '../support/http';
import { expectProblem } from '../support/problems';
import { ROOT, run, TSC, typeCheck } from '../support/scripts';

const GENERATOR = join(ROOT, 'dist-dev', 'client', 'scripts', 'collections.js');

const TODO_SCHEMA = {
  type: 'object',
  properties: {
    title: { type: 'string', minLength: 1 },
    done: { type: 'boolean' },
    priority: { type: 'integer', minimum: 0 },
    tags: { type: 'array', items: { type: 'string' } },
    assignee: { $ref: '#/$defs/Person' },
  },
  required: ['title'],
  additionalProperties: false,
  $defs: {
    Person: { type: 'object', properties: { name: { type: 'string' } }, required: ['name'] },
  },
};

/** An app's code that uses the generated types as they are meant to be used. */
const GOOD_USE = `
import createClient from 'openapi-fetch';
import type { CollectionTypes, components, paths } from './collections';

type Todo = components['schemas']['todos.Item'];

export function describe(todo: Todo): string {
  const tags: string[] = todo.tags ?? [];
  const priority: number | undefined = todo.priority;
  return \`\${todo._id} \${todo.title} \${todo.assignee?.name ?? ''} \${priority ?? 0} \${tags.join()} \${todo._createdAt}\`;
}

const api = createClient<paths>({ baseUrl: 'http://localhost:3000' });

export async function addTodo(): Promise<CollectionTypes['todos']['item'] | undefined> {
  const { data } = await api.POST('/data/todos', {
    body: { item: { title: 'Write the report', priority: 1, assignee: { name: 'Ada' } } },
  });
  await api.PUT('/data/todos/_id/{id}', {
    params: { path: { id: 'todo-1' } },
    body: { values: { done: true } },
  });
  const { data: notes } = await api.GET('/data/notes');
  return notes === undefined ? data : data;
}

// notes has a search configuration: its list takes q; every list and read takes expand.
export async function searchNotes(): Promise<number> {
  const { data: found } = await api.GET('/data/notes', {
    params: { query: { q: 'red sho', expand: 'todo:todos', limit: 10 } },
  });
  const { data: todo } = await api.GET('/data/todos/_id/{id}', {
    params: { path: { id: 'todo-1' }, query: { expand: 'assignee:people' } },
  });
  return (found?.length ?? 0) + (todo === undefined ? 0 : 1);
}
`;

/** q where the collection has no search configuration: not in its list's parameters. */
const Q_WITHOUT_SEARCH = `import createClient from 'openapi-fetch';
import type { paths } from './collections';

const api = createClient<paths>({ baseUrl: 'http://localhost:3000' });

export const todos = api.GET('/data/todos', { params: { query: { q: 'red' } } });
`;

/** The same, with a wrong type in one field of a new item: written in place, and assigned. */
const WRONG_FIELD_TYPE = `import type { CollectionTypes } from './collections';

type NewTodo = CollectionTypes['todos']['newItem'];

export const written: NewTodo = { title: 'Write the report', priority: 'high' };

const read = { title: 'Read the report', priority: 'low' };
export const assigned: NewTodo = read;
`;
/** Where tsc reports the field written in place: its line and column (1-based). */
const WRITTEN_AT = ((lines) => {
  const line = lines.findIndex((text) => text.startsWith('export const written'));
  return `(${line + 1},${(lines[line] ?? '').indexOf('priority') + 1})`;
})(WRONG_FIELD_TYPE.split('\n'));

describe('typed clients for a tenant’s collections', () => {
  let t: TestApp;
  let user: TestUser;
  let api: Client;
  let baseUrl: string;
  /** Inside the repository (dist-dev, not committed), so that `openapi-fetch` resolves. */
  const workDir = join(ROOT, 'dist-dev', `typed-collections-${randomBytes(4).toString('hex')}`);

  async function setSchema(client: Client, collection: string, schema: object): Promise<void> {
    await client.put(`/data/${collection}/schema`, { schema, action: 'error' }).expect(200);
  }

  beforeAll(async () => {
    t = await createTestApp(__filename);
    await t.app.listen(0, '127.0.0.1');
    baseUrl = `http://127.0.0.1:${(t.app.getHttpServer().address() as AddressInfo).port}`;
    user = await createUser(t);
    api = as(t, user);
    await api.post('/data/todos', { item: { title: 'first' } }).expect(200);
    await setSchema(api, 'todos', TODO_SCHEMA);
    await api.post('/data/notes', { item: { text: 'untyped' } }).expect(200);
    // Only the configuration matters to the document, not its build.
    await api.put('/data/notes/search', { fields: ['text'] }).expect(202);
    mkdirSync(workDir, { recursive: true });
    // The generator as `npm run client:collections` runs it: compiled with the client.
    const build = await run(TSC, ['-b', 'client']);
    expect(build.stdout + build.stderr).toBe('');
    expect(existsSync(GENERATOR)).toBe(true);
  }, 180_000);

  afterAll(async () => {
    rmSync(workDir, { recursive: true, force: true });
    await t.close();
  });

  describe('GET /data/openapi.json', () => {
    it('answers the document of the caller’s collections, not a collection named openapi.json', async () => {
      const res = await api.get('/data/openapi.json').expect(200);
      expect(res.body.openapi).toBe('3.1.0');
      expect(Object.keys(res.body.paths)).toEqual([
        '/data/notes',
        '/data/notes/_id/{id}',
        '/data/todos',
        '/data/todos/_id/{id}',
      ]);
      const schemas = res.body.components.schemas;
      expect(schemas['todos.Fields'].properties.title).toEqual({ type: 'string', minLength: 1 });
      expect(schemas['todos.Item'].required).toEqual(['title', '_id', '_createdAt', '_updatedAt']);
      expect(schemas['todos.Fields'].properties.assignee).toEqual({
        $ref: '#/components/schemas/todos.defs.Person',
      });
      expect(schemas).not.toHaveProperty(['notes.Item']);
    });

    it('describes the items the service answers on its routes', async () => {
      const document = (await api.get('/data/openapi.json').expect(200)).body;
      const ajv = new Ajv2020({ strict: false });
      addFormats(ajv);
      ajv.addSchema(document, 'collections');
      const schemaOf = (name: string) => {
        const validate = ajv.getSchema(`collections#/components/schemas/${name}`);
        if (!validate) throw new Error(`no component ${name}`);
        return (value: unknown) => validate(value);
      };
      const newItem = { _id: 'todo-typed', title: 'Typed', priority: 2, assignee: { name: 'Ada' } };
      expect(schemaOf('todos.NewItem')(newItem)).toBe(true);
      const created = await api.post('/data/todos', { item: newItem }).expect(200);
      const updated = await api
        .put('/data/todos/_id/todo-typed', { values: { done: true } })
        .expect(200);
      const read = await api.get('/data/todos/_id/todo-typed').expect(200);
      const list = await api.get('/data/todos').expect(200);
      const item = schemaOf('todos.Item');
      for (const answer of [created.body, updated.body, read.body, ...list.body])
        expect({ answer, valid: item(answer) }).toEqual({ answer, valid: true });
      expect(item({ ...read.body, priority: 'high' })).toBe(false);
      await api.delete('/data/todos/_id/todo-typed').expect(204);
    });

    it('describes q on the list of a collection with a search configuration, and expand on lists and reads', async () => {
      const document = (await api.get('/data/openapi.json').expect(200)).body;
      const parameters = (path: string, operation: string): string[] =>
        (document.paths[path][operation].parameters as { $ref: string }[]).map((p) =>
          p.$ref.replace('#/components/parameters/', ''),
        );
      expect(parameters('/data/notes', 'get')).toEqual(expect.arrayContaining(['q', 'expand']));
      expect(parameters('/data/todos', 'get')).toContain('expand');
      expect(parameters('/data/todos', 'get')).not.toContain('q');
      for (const collection of ['notes', 'todos'])
        expect(parameters(`/data/${collection}/_id/{id}`, 'get')).toContain('expand');
      const { q, expand } = document.components.parameters;
      expect(q).toMatchObject({ in: 'query', schema: { type: 'string' } });
      expect(expand).toMatchObject({ in: 'query', schema: { type: 'string' } });
      // The pattern is the one the service checks: a pair passes, a pair without a collection not.
      const pattern = new RegExp(expand.schema.pattern, 'u');
      expect(pattern.test('customer:customers,lines.product:products')).toBe(true);
      expect(pattern.test('customer')).toBe(false);
      await api.get('/data/notes', { query: { expand: 'customer' } }).expect(400);
      // What the document describes, the service answers: q on notes, and a 400 on todos.
      await api.get('/data/notes', { query: { q: 'untyped' } }).expect((res) => {
        expect([200, 409]).toContain(res.status);
      });
      await api.get('/data/todos', { query: { q: 'first' } }).expect(400);
    });

    it('follows a schema change at once', async () => {
      const before = await api.get('/data/openapi.json').expect(200);
      await setSchema(api, 'todos', { ...TODO_SCHEMA, required: [] });
      const after = await api.get('/data/openapi.json').expect(200);
      expect(after.body.components.schemas['todos.Item'].required).toEqual([
        '_id',
        '_createdAt',
        '_updatedAt',
      ]);
      expect(after.body.info.version).not.toBe(before.body.info.version);
      await setSchema(api, 'todos', TODO_SCHEMA);
    });

    it('shows each key its own namespace and branch', async () => {
      const collectionsOf = async (client: Client, branch?: string): Promise<string[]> => {
        const res = await client
          .get('/data/openapi.json', branch === undefined ? {} : { branch })
          .expect(200);
        return res.body.tags.map((tag: { name: string }) => tag.name);
      };
      const sub = await createSubKey(t, user);
      expect(await collectionsOf(as(t, sub))).toEqual(['notes', 'todos']);
      expect(await collectionsOf(api, 'staging')).toEqual([]);
      const other = as(t, await createUser(t));
      expect(await collectionsOf(other)).toEqual([]);
      const team: TestTeam = await createTeam(t);
      await as(t, team)
        .post('/data/tasks', { item: { title: 'team' } })
        .expect(200);
      expect(await collectionsOf(as(t, team))).toEqual(['tasks']);
      const member = await createUser(t);
      await addTeamMember(t, team, member);
      const asMember = await as(t, member)
        .get('/data/openapi.json', { headers: { 'X-Team': team.teamId } })
        .expect(200);
      expect(asMember.body.tags).toEqual([{ name: 'tasks' }]);
    });

    it('answers 405 with Allow to the other verbs, never writing a collection of that name', async () => {
      const res = await api.post('/data/openapi.json', { item: { a: 1 } }).expect(405);
      expectProblem(res, 405, 'METHOD_NOT_ALLOWED');
      expect(res.headers.allow).toMatch(/\bGET\b/);
      expect((await api.delete('/data/openapi.json').expect(405)).headers.allow).toMatch(/\bGET\b/);
      const names = (await api.get('/data').expect(200)).body.map((c: { name: string }) => c.name);
      expect(names).toEqual(['notes', 'todos']);
    });

    it('answers 401 without a key', async () => {
      const res = await anonymous(t).get('/data/openapi.json').expect(401);
      expectProblem(res, 401, 'UNAUTHENTICATED');
    });
  });

  describe('npm run client:collections', () => {
    const out = (): string => join(workDir, 'collections.ts');

    beforeAll(async () => {
      const generated = await run(GENERATOR, ['--url', baseUrl, '--out', out()], {
        PDS_API_KEY: user.apiKey,
      });
      expect(generated.stderr).toBe('');
      expect(generated.status).toBe(0);
      expect(generated.stdout).toContain('(2 collections)');
    }, 60_000);

    it('writes openapi-typescript types with each collection’s item types', () => {
      const types = readFileSync(out(), 'utf8');
      expect(types).toContain("'todos.Item': {");
      expect(types).toMatch(/priority\?: number;/);
      expect(types).toContain('export interface CollectionTypes {');
    });

    it('compiles strictly with code that uses the generated item types', async () => {
      writeFileSync(join(workDir, 'good.ts'), GOOD_USE);
      const result = await typeCheck(join(workDir, 'good.ts'));
      expect(result.stdout + result.stderr).toBe('');
      expect(result.status).toBe(0);
    }, 60_000);

    it('refuses q on the list of a collection without a search configuration', async () => {
      writeFileSync(join(workDir, 'no-search.ts'), Q_WITHOUT_SEARCH);
      const result = await typeCheck(join(workDir, 'no-search.ts'));
      expect(result.status).not.toBe(0);
      expect(result.stdout).toContain("'q' does not exist");
    }, 60_000);

    it('fails to compile a wrong type in a field, naming the field', async () => {
      writeFileSync(join(workDir, 'bad.ts'), WRONG_FIELD_TYPE);
      const result = await typeCheck(join(workDir, 'bad.ts'));
      expect(result.status).not.toBe(0);
      // The field written in place is where the error is; the assigned one is named by it.
      expect(result.stdout).toContain(`bad.ts${WRITTEN_AT}: error TS2322`);
      expect(result.stdout).toContain("Types of property 'priority' are incompatible");
      expect(result.stdout.match(/error TS/g)).toHaveLength(2);
    }, 60_000);

    it('takes the branch from --branch and refuses to run without the key variable', async () => {
      const staging = join(workDir, 'staging.ts');
      const generated = await run(
        GENERATOR,
        ['--url', baseUrl, '--out', staging, '--branch', 'staging'],
        {
          PDS_API_KEY: user.apiKey,
        },
      );
      expect(generated.status).toBe(0);
      expect(readFileSync(staging, 'utf8')).not.toContain('todos');
      const keyless = await run(GENERATOR, ['--url', baseUrl, '--out', join(workDir, 'none.ts')]);
      expect(keyless.status).toBe(1);
      expect(keyless.stderr).toContain('PDS_API_KEY is not set');
      expect(existsSync(join(workDir, 'none.ts'))).toBe(false);
    });

    it('reports the service’s problem when the key is refused', async () => {
      const refused = await run(GENERATOR, ['--url', baseUrl, '--out', join(workDir, 'x.ts')], {
        PDS_API_KEY: 'pds_not-a-key',
      });
      expect(refused.status).toBe(1);
      expect(refused.stderr).toContain('answered 401: UNAUTHENTICATED');
    });
  });
});
