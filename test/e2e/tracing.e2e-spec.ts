import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join, resolve } from 'node:path';
import { childPort, portForChild } from '../../tools/dev-database';
import { testDatabaseUri, TEST_ADMIN_KEY, uniqueDbName } from '../support/app';
import { ensureBuilt, send, startService, type Reply } from '../support/service-process';
import type { ReportedSpan } from '../support/tracing-harness';

const ROOT = resolve(__dirname, '..', '..');
const HARNESS = join(ROOT, 'test', 'support', 'tracing-harness.ts');
const HTTP_SCOPE = '@opentelemetry/instrumentation-http';
const MONGODB_SCOPE = '@opentelemetry/instrumentation-mongodb';
const SERVER = 1;

function hex(bytes: number): string {
  return randomBytes(bytes).toString('hex');
}

/** A W3C traceparent from a caller whose span is `spanId` in trace `traceId`, sampled. */
function traceparent(): { header: string; traceId: string; spanId: string } {
  const traceId = hex(16);
  const spanId = hex(8);
  return { header: `00-${traceId}-${spanId}-01`, traceId, spanId };
}

function base(): Record<string, string> {
  return {
    PATH: process.env.PATH ?? '',
    NODE_ENV: 'production',
    HOST: '127.0.0.1',
    MONGODB_URI: testDatabaseUri(),
    MONGODB_DB_NAME: uniqueDbName(__filename),
    ADMIN_API_KEY: TEST_ADMIN_KEY,
    LOG_LEVEL: 'info',
  };
}

async function until<T>(what: string, probe: () => Promise<T | undefined>): Promise<T> {
  const by = Date.now() + 15_000;
  for (;;) {
    const found = await probe();
    if (found !== undefined) return found;
    if (Date.now() > by) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

/** The service with an in-memory span exporter (test/support/tracing-harness.ts). */
interface Harness {
  send(
    method: string,
    path: string,
    headers?: Record<string, string>,
    body?: unknown,
  ): Promise<Reply>;
  spans(): Promise<ReportedSpan[]>;
  stdout(): string;
  stop(): Promise<void>;
}

async function startHarness(): Promise<Harness> {
  ensureBuilt();
  const given = await portForChild();
  const child: ChildProcess = spawn(
    process.execPath,
    ['--require', 'ts-node/register/transpile-only', HARNESS],
    {
      cwd: ROOT,
      env: { ...base(), PORT: String(given) },
      stdio: ['ignore', 'pipe', 'pipe', 'ipc'],
    },
  );
  let stdout = '';
  let stderr = '';
  child.stdout?.on('data', (chunk: Buffer) => (stdout += chunk.toString('utf8')));
  child.stderr?.on('data', (chunk: Buffer) => (stderr += chunk.toString('utf8')));
  const exited = new Promise<void>((done) => child.once('exit', () => done()));
  const port = (await childPort(child, given, 60_000)) ?? given;
  const harness: Harness = {
    send: (method, path, headers, body) => send(undefined, port, method, path, headers, body),
    spans: () =>
      new Promise((resolveSpans, reject) => {
        const timer = setTimeout(() => reject(new Error('the harness did not report')), 5_000);
        child.once('message', (spans) => {
          clearTimeout(timer);
          resolveSpans(spans as ReportedSpan[]);
        });
        child.send('spans', (error) => {
          if (error) reject(error);
        });
      }),
    stdout: () => stdout,
    stop: async () => {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
      await exited;
    },
  };
  try {
    await until('the traced service to be ready', async () => {
      if (child.exitCode !== null) throw new Error(`the harness exited:\n${stderr}\n${stdout}`);
      const ready = await harness.send('GET', '/health/ready').catch(() => undefined);
      return ready?.status === 200 ? true : undefined;
    });
  } catch (error) {
    await harness.stop();
    throw error;
  }
  return harness;
}

/** Whether `span` descends from the span `ancestorId` (through its parents among `spans`). */
function descendsFrom(span: ReportedSpan, ancestorId: string, spans: ReportedSpan[]): boolean {
  const byId = new Map(spans.map((s) => [s.spanId, s]));
  for (let parent = span.parentSpanId; parent; parent = byId.get(parent)?.parentSpanId) {
    if (parent === ancestorId) return true;
  }
  return false;
}

describe('tracing (OpenTelemetry, in-memory exporter)', () => {
  let service: Harness;

  beforeAll(async () => {
    service = await startHarness();
  }, 90_000);

  afterAll(async () => {
    await service?.stop();
  });

  it('gives a request an HTTP server span with MongoDB spans below it, continuing the traceparent', async () => {
    const caller = traceparent();
    const res = await service.send(
      'POST',
      '/admin/users',
      { 'X-Api-Key': TEST_ADMIN_KEY, traceparent: caller.header },
      { email: `${hex(4)}@example.com` },
    );
    expect(res.status).toBe(200);

    const { server, spans } = await until('the spans of the request', async () => {
      const all = (await service.spans()).filter((s) => s.traceId === caller.traceId);
      const found = all.find((s) => s.scope === HTTP_SCOPE && s.kind === SERVER);
      return found ? { server: found, spans: all } : undefined;
    });
    // The caller's span is the parent: the trace goes on rather than starting anew.
    expect(server.parentSpanId).toBe(caller.spanId);
    const database = spans.filter((s) => s.scope === MONGODB_SCOPE);
    expect(database.length).toBeGreaterThan(0);
    for (const span of database) {
      expect({ name: span.name, below: descendsFrom(span, server.spanId, spans) }).toEqual({
        name: span.name,
        below: true,
      });
    }
  });

  it('uses the trace id as the traceId of problems and of the request log line', async () => {
    const caller = traceparent();
    const res = await service.send('GET', '/project', { traceparent: caller.header });
    expect(res.status).toBe(401);
    const problem = JSON.parse(res.body) as { code: string; traceId: string };
    expect(problem).toMatchObject({ code: 'UNAUTHENTICATED', traceId: caller.traceId });
    // X-Request-Id keeps its meaning: the request's own id.
    const requestId = res.headers['x-request-id'];
    expect(typeof requestId).toBe('string');
    expect(requestId).not.toBe(caller.traceId);

    const line = await until('the request log line', () => {
      const lines = service
        .stdout()
        .split('\n')
        .filter((l) => l.startsWith('{'))
        .map((l) => JSON.parse(l) as { req?: { id?: string }; traceId?: string });
      return Promise.resolve(lines.find((l) => l.req?.id === requestId));
    });
    expect(line.traceId).toBe(caller.traceId);
  });

  it('starts a trace for a request without traceparent, and its problem carries that trace id', async () => {
    const res = await service.send('GET', `/nowhere/${hex(4)}`);
    expect(res.status).toBe(404);
    const { traceId } = JSON.parse(res.body) as { traceId: string };
    expect(traceId).toMatch(/^[0-9a-f]{32}$/);
    const server = await until('the server span', async () =>
      (await service.spans()).find((s) => s.traceId === traceId && s.kind === SERVER),
    );
    expect(server.parentSpanId).toBeUndefined();
  });
});

/** An OTLP/HTTP collector on loopback that keeps what it receives (JSON encoding). */
async function startCollector(): Promise<{
  url: string;
  spans: () => { traceId: string; kind: number; scope: string; service: unknown }[];
  close: () => Promise<void>;
}> {
  const received: unknown[] = [];
  const server: Server = createServer((req, res) => {
    let body = '';
    req.setEncoding('utf8');
    req.on('data', (chunk: string) => (body += chunk));
    req.on('end', () => {
      if (req.url === '/v1/traces') received.push(JSON.parse(body));
      res.writeHead(200, { 'Content-Type': 'application/json' }).end('{}');
    });
  });
  await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
  const { port } = server.address() as AddressInfo;
  type Attribute = { key: string; value: { stringValue?: string } };
  type Request = {
    resourceSpans: {
      resource: { attributes: Attribute[] };
      scopeSpans: { scope: { name: string }; spans: { traceId: string; kind: number }[] }[];
    }[];
  };
  return {
    url: `http://127.0.0.1:${port}`,
    spans: () =>
      (received as Request[]).flatMap((request) =>
        request.resourceSpans.flatMap(({ resource, scopeSpans }) =>
          scopeSpans.flatMap(({ scope, spans }) =>
            spans.map((span) => ({
              traceId: span.traceId,
              kind: span.kind,
              scope: scope.name,
              service: resource.attributes.find((a) => a.key === 'service.name')?.value.stringValue,
            })),
          ),
        ),
      ),
    close: () => new Promise((done) => server.close(() => done())),
  };
}

describe('tracing in production: node dist/main.js with OTEL_EXPORTER_OTLP_ENDPOINT', () => {
  it('exports the spans of a request over OTLP/HTTP, the last ones when it shuts down', async () => {
    const collector = await startCollector();
    const service = await startService({
      MONGODB_DB_NAME: uniqueDbName(__filename),
      OTEL_EXPORTER_OTLP_ENDPOINT: collector.url,
      // Nothing is exported on a schedule during the test: only the flush at shutdown sends.
      OTEL_BSP_SCHEDULE_DELAY: '600000',
    });
    try {
      const caller = traceparent();
      const res = await service.send(
        'POST',
        '/admin/users',
        { 'X-Api-Key': TEST_ADMIN_KEY, traceparent: caller.header },
        { email: `${hex(4)}@example.com` },
      );
      expect(res.status).toBe(200);
      service.process.kill('SIGTERM');
      expect((await service.exited).code).toBe(0);

      const spans = collector.spans().filter((s) => s.traceId === caller.traceId);
      // OTLP span kinds: 2 server, 3 client.
      expect(spans).toEqual(
        expect.arrayContaining([
          { traceId: caller.traceId, kind: 2, scope: HTTP_SCOPE, service: 'profile-data-service' },
          {
            traceId: caller.traceId,
            kind: 3,
            scope: MONGODB_SCOPE,
            service: 'profile-data-service',
          },
        ]),
      );
    } finally {
      await service.kill();
      await collector.close();
    }
  });
});

describe('tracing off (no OTEL_EXPORTER_OTLP_ENDPOINT)', () => {
  /** The OpenTelemetry SDK and instrumentation modules loaded by dist/tracing.js. */
  function sdkModulesLoaded(env: Record<string, string>): string[] {
    ensureBuilt();
    const out = spawnSync(
      process.execPath,
      [
        '-e',
        `require('./dist/tracing');
         const loaded = Object.keys(require.cache).filter((f) => /@opentelemetry[\\/\\\\](sdk-|instrumentation)/.test(f));
         process.stdout.write(JSON.stringify(loaded));`,
      ],
      {
        cwd: ROOT,
        env: { PATH: process.env.PATH ?? '', NODE_ENV: 'test', ...env },
        encoding: 'utf8',
        timeout: 30_000,
      },
    );
    expect(out.stderr).toBe('');
    return JSON.parse(out.stdout) as string[];
  }

  it('loads nothing of the SDK', () => {
    expect(sdkModulesLoaded({})).toEqual([]);
    // The same check sees the SDK when tracing is on.
    expect(
      sdkModulesLoaded({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://127.0.0.1:9' }).length,
    ).toBeGreaterThan(0);
  });
});
