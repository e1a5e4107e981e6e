import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import Ajv2020 from 'ajv/dist/2020';
import { parse } from 'yaml';
import { ENVIRONMENT_SECTIONS } from '../../src/config/environment';

/**
 * compose.yaml is checked without a container engine: against the Compose Specification's JSON
 * schema, as shipped in compose-go (the loader `docker compose` itself uses), fetched from the Go
 * module proxy at a pinned version and cached in Go's module cache; then for the wiring a schema
 * cannot see (start order, replica-set members, the settings the service reads).
 */
const COMPOSE_GO = 'github.com/compose-spec/compose-go/v2@v2.16.2';
const ROOT = resolve(__dirname, '..', '..');

interface Service {
  image?: string;
  build?: unknown;
  command?: string[];
  depends_on?: Record<string, { condition: string }>;
  environment?: Record<string, string>;
  healthcheck?: { test: string[] };
}
interface ComposeFile {
  services: Record<string, Service>;
  configs?: Record<string, { content?: string }>;
}

function composeSchema(): object {
  let output: string;
  try {
    output = execFileSync('go', ['mod', 'download', '-json', COMPOSE_GO], {
      cwd: tmpdir(),
      encoding: 'utf8',
      timeout: 120_000,
    });
  } catch (error) {
    throw new Error(
      `validating compose.yaml needs the Go toolchain to fetch the Compose schema (${COMPOSE_GO}) ` +
        `from the Go module proxy: ${error instanceof Error ? error.message : String(error)}`,
    );
  }
  const { Dir, Error: failure } = JSON.parse(output) as { Dir?: string; Error?: string };
  if (!Dir) throw new Error(`could not download ${COMPOSE_GO}: ${failure ?? 'no Dir'}`);
  return JSON.parse(readFileSync(join(Dir, 'schema', 'compose-spec.json'), 'utf8')) as object;
}

describe('compose.yaml', () => {
  const text = readFileSync(join(ROOT, 'compose.yaml'), 'utf8');
  // YAML merge keys (<<) resolved, as Compose does.
  const compose = parse(text, { merge: true }) as ComposeFile;
  const services = compose.services;

  it('is valid against the Compose Specification schema', () => {
    const ajv = new Ajv2020({ allErrors: true, strict: false });
    const validate = ajv.compile(composeSchema());
    const valid = validate(parse(text, { merge: true }));
    expect(validate.errors ?? []).toEqual([]);
    expect(valid).toBe(true);
  }, 150_000);

  it('starts every service only after what it depends on is healthy or done', () => {
    for (const [name, service] of Object.entries(services)) {
      for (const [target, { condition }] of Object.entries(service.depends_on ?? {})) {
        expect({ name, target, exists: target in services }).toEqual({
          name,
          target,
          exists: true,
        });
        if (condition === 'service_healthy')
          expect({ target, healthcheck: services[target]?.healthcheck !== undefined }).toEqual({
            target,
            healthcheck: true,
          });
        else
          expect({ target, condition }).toEqual({
            target,
            condition: 'service_completed_successfully',
          });
      }
    }
    // Nothing long-running without a healthcheck: the proxy and both instances are probed.
    for (const name of ['mongo1', 'mongo2', 'mongo3', 'api1', 'api2', 'proxy'])
      expect(services[name]?.healthcheck).toBeDefined();
  });

  it('runs a three-member replica set that the init job and both instances name', () => {
    const members = ['mongo1', 'mongo2', 'mongo3'];
    for (const member of members)
      expect(services[member]?.command).toEqual(['mongod', '--replSet', 'rs0', '--bind_ip_all']);
    const init = (services['mongo-init']?.command ?? []).join(' ');
    for (const member of members) expect(init).toContain(`host: '${member}:27017'`);
    expect(init).toContain("_id: 'rs0'");

    const apis = Object.entries(services).filter(([, service]) => service.build !== undefined);
    expect(apis.map(([name]) => name).sort()).toEqual(['api1', 'api2']);
    for (const [, api] of apis) {
      const uri = api.environment?.MONGODB_URI ?? '';
      for (const member of members) expect(uri).toContain(`${member}:27017`);
      expect(uri).toContain('replicaSet=rs0');
      expect(api.environment?.NODE_ENV).toBe('production');
    }
  });

  it('sets only variables the service reads', () => {
    const known = new Set(
      Object.values(ENVIRONMENT_SECTIONS)
        .flatMap((section) => Object.keys(new section()))
        .concat('MONGODB_URI', 'ADMIN_API_KEY'),
    );
    for (const name of ['api1', 'api2'])
      for (const variable of Object.keys(services[name]?.environment ?? {}))
        expect({ variable, known: known.has(variable) }).toEqual({ variable, known: true });
  });

  it('balances the proxy over both instances', () => {
    const nginx = compose.configs?.nginx?.content ?? '';
    expect(nginx).toContain('server api1:3000');
    expect(nginx).toContain('server api2:3000');
  });
});
