// What the package's `profile-data-client-types` command (and, in this repository,
// `npm run client:collections`) does: fetches a deployment's GET /data/openapi.json with a key (the
// caller's namespace: its collections, typed by their JSON Schemas) and makes TypeScript types of
// it with openapi-typescript. openapi-typescript is an optional peer dependency of the package:
// only an app that generates types needs it, and then as a development dependency.
import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { parseArgs } from 'node:util';

/** The environment variable that holds the key: a key on the command line would end up in shell histories. */
export const API_KEY_VARIABLE = 'PDS_API_KEY';

/** The package's command, as an app runs it once the package is installed. */
export const COMMAND = 'npx profile-data-client-types';

/** How to call the generator, for a command that runs it (`command` as the caller types it). */
export const usage = (
  command: string,
): string => `Usage: ${API_KEY_VARIABLE}=<key> ${command} --url <base> --out <file> [--branch <branch>] [--team <teamId>]
  --url      where the service listens, e.g. https://api.example.com
  --out      the TypeScript file to write
  --branch   the branch whose collections to type (X-Branch; a key bound to a branch needs none)
  --team     a team's collections, with a member's root key (X-Team)
The key (root, sub or team) is read from ${API_KEY_VARIABLE}, never from the command line.
The types are made by openapi-typescript, which the app installs (npm install -D openapi-typescript).`;

export interface CollectionsOptions {
  url: string;
  out: string;
  apiKey: string;
  branch?: string;
  team?: string;
}

/** A mistake in how the script was called: its message says what to do, no stack needed. */
export class UsageError extends Error {
  override name = 'UsageError';
}

/** The options of a command line and an environment; a UsageError says what is missing. */
export function parseCollectionsOptions(
  argv: string[],
  env: Record<string, string | undefined>,
  command = COMMAND,
): CollectionsOptions {
  let values;
  try {
    ({ values } = parseArgs({
      args: argv,
      strict: true,
      allowPositionals: false,
      options: {
        url: { type: 'string' },
        out: { type: 'string' },
        branch: { type: 'string' },
        team: { type: 'string' },
      },
    }));
  } catch (error) {
    throw new UsageError(
      `${error instanceof Error ? error.message : String(error)}\n${usage(command)}`,
    );
  }
  const apiKey = env[API_KEY_VARIABLE];
  if (!values.url || !values.out)
    throw new UsageError(`--url and --out are required\n${usage(command)}`);
  if (!apiKey) throw new UsageError(`${API_KEY_VARIABLE} is not set\n${usage(command)}`);
  return {
    url: values.url,
    out: resolve(values.out),
    apiKey,
    ...(values.branch !== undefined ? { branch: values.branch } : {}),
    ...(values.team !== undefined ? { team: values.team } : {}),
  };
}

/** The collections document the key's namespace has, as text. */
export async function fetchCollectionsDocument(options: CollectionsOptions): Promise<string> {
  const headers: Record<string, string> = { 'X-Api-Key': options.apiKey };
  if (options.branch !== undefined) headers['X-Branch'] = options.branch;
  if (options.team !== undefined) headers['X-Team'] = options.team;
  const url = `${options.url.replace(/\/+$/, '')}/data/openapi.json`;
  const res = await fetch(url, { headers }).catch((error: unknown) => {
    const cause = error instanceof Error && error.cause instanceof Error ? error.cause : error;
    throw new UsageError(
      `GET ${url} failed: ${cause instanceof Error ? cause.message : String(cause)}`,
    );
  });
  const text = await res.text();
  if (res.status !== 200) {
    throw new UsageError(`GET ${url} answered ${res.status}: ${problemDetail(text)}`);
  }
  return text;
}

/** A problem's `code: detail`, or the start of whatever else the body holds. */
function problemDetail(text: string): string {
  try {
    const body: unknown = JSON.parse(text);
    if (typeof body === 'object' && body !== null && 'detail' in body && 'code' in body)
      return `${String(body.code)}: ${String(body.detail)}`;
  } catch {
    // Not JSON: shown as it is.
  }
  return text.slice(0, 200);
}

/** The collection names of a document: the tags it gives their operations. */
function collectionNames(document: unknown): string[] {
  if (typeof document !== 'object' || document === null || !('tags' in document)) return [];
  const { tags } = document;
  if (!Array.isArray(tags)) return [];
  return tags.flatMap((tag: unknown) =>
    typeof tag === 'object' && tag !== null && 'name' in tag && typeof tag.name === 'string'
      ? [tag.name]
      : [],
  );
}

/** Whether the document has a component schema of this name. */
function hasSchema(document: unknown, name: string): boolean {
  if (typeof document !== 'object' || document === null || !('components' in document))
    return false;
  const { components } = document;
  if (typeof components !== 'object' || components === null || !('schemas' in components))
    return false;
  const { schemas } = components;
  return typeof schemas === 'object' && schemas !== null && name in schemas;
}

/** Turns the generated text into its final form (a repository's Prettier, say); none by default. */
export type Formatter = (text: string, outFile: string) => Promise<string>;

/**
 * openapi-typescript, loaded when types are made: a missing install is a UsageError saying what
 * to do. The return type is inferred: the module's namespace type depends on the build's module
 * kind (CommonJS or ES modules).
 */
async function loadOpenapiTypescript() {
  try {
    return await import('openapi-typescript');
  } catch (error) {
    throw new UsageError(
      `openapi-typescript could not be loaded (${error instanceof Error ? error.message : String(error)}): install it beside this package with \`npm install -D openapi-typescript\``,
    );
  }
}

/**
 * openapi-typescript's types of the document, and `CollectionTypes`: each collection's item
 * types by its name, so that an app writes `CollectionTypes['todos']['item']`.
 */
export async function collectionTypes(
  documentText: string,
  source: string,
  outFile: string,
  formatter: Formatter = (text) => Promise.resolve(text),
  command = COMMAND,
): Promise<string> {
  const document: unknown = JSON.parse(documentText);
  const { default: openapiTS, astToString } = await loadOpenapiTypescript();
  const ast = await openapiTS(documentText);
  const types = (name: string): string => {
    const own = hasSchema(document, `${name}.Item`);
    const ref = (kind: string): string =>
      `components['schemas'][${JSON.stringify(own ? `${name}.${kind}` : kind)}]`;
    return `  ${JSON.stringify(name)}: { item: ${ref('Item')}; newItem: ${ref('NewItem')}; values: ${ref('Values')} };`;
  };
  const text = [
    `// Generated by \`${command}\` from ${source} with openapi-typescript.`,
    '// Do not edit: change the collection schemas, then generate again.',
    '',
    astToString(ast),
    "/** Each collection's item types: a stored item, the `item` of a create, the `values` of an update. */",
    'export interface CollectionTypes {',
    ...collectionNames(document).map(types),
    '}',
    '',
  ].join('\n');
  return formatter(text, outFile);
}

/**
 * The command's whole run: options from `argv` and `env`, the types written, what was written on
 * stdout; a UsageError's message (or any other error's stack) on stderr and exit code 1.
 */
export async function runCollectionTypes(
  argv: string[],
  env: Record<string, string | undefined>,
  command = COMMAND,
  formatter?: Formatter,
): Promise<void> {
  try {
    const options = parseCollectionsOptions(argv, env, command);
    process.stdout.write(`${await writeCollectionTypes(options, formatter, command)}\n`);
  } catch (error) {
    const message =
      error instanceof UsageError
        ? error.message
        : error instanceof Error
          ? (error.stack ?? error.message)
          : String(error);
    process.stderr.write(`${message}\n`);
    process.exitCode = 1;
  }
}

/** Fetches the document and writes its types; answers what was written. */
export async function writeCollectionTypes(
  options: CollectionsOptions,
  formatter?: Formatter,
  command = COMMAND,
): Promise<string> {
  const text = await fetchCollectionsDocument(options);
  const source = `${options.url.replace(/\/+$/, '')}/data/openapi.json`;
  const types = await collectionTypes(text, source, options.out, formatter, command);
  mkdirSync(dirname(options.out), { recursive: true });
  writeFileSync(options.out, types);
  const count = collectionNames(JSON.parse(text)).length;
  return `wrote ${options.out} (${count} collection${count === 1 ? '' : 's'})`;
}
