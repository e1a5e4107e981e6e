import { Writable } from 'node:stream';
import pino from 'pino';
import { loggerOptions, PinoLoggerService, SERVICE_IDENTITY } from './logger';

/** A pino logger with the service's options, writing into an array of parsed lines. */
function capture(level: 'info' | 'debug' = 'info') {
  const lines: Record<string, unknown>[] = [];
  const sink = new Writable({
    write(chunk: Buffer, _encoding, done) {
      for (const line of chunk.toString('utf8').split('\n')) {
        if (line.trim()) lines.push(JSON.parse(line) as Record<string, unknown>);
      }
      done();
    },
  });
  const logger = pino(loggerOptions({ logLevel: level, nodeEnv: 'production' }), sink);
  return { logger, lines };
}

describe('logger configuration', () => {
  it('writes JSON lines with a level name, ISO time, service and version', () => {
    const { logger, lines } = capture();
    logger.info({ url: 'http://localhost:3000' }, 'listening');
    expect(lines).toHaveLength(1);
    const line = lines[0] ?? {};
    expect(line).toMatchObject({
      level: 'info',
      msg: 'listening',
      url: 'http://localhost:3000',
      service: 'profile-data-service',
      version: SERVICE_IDENTITY.version,
    });
    expect(SERVICE_IDENTITY.version).toMatch(/^\d+\.\d+\.\d+/);
    expect(new Date(line.time as string).toISOString()).toBe(line.time);
  });

  it('keeps the configured level', () => {
    expect(loggerOptions({ logLevel: 'warn' }).level).toBe('warn');
  });

  it("logs Nest's module and route wiring at debug, other framework lines at info", () => {
    const quiet = capture('info');
    const service = new PinoLoggerService(quiet.logger);
    service.log('Mapped {/health, GET} route', 'RouterExplorer');
    service.log('HealthController {/health}:', 'RoutesResolver');
    service.log('AppModule dependencies initialized', 'InstanceLoader');
    service.log('Nest application successfully started', 'NestApplication');
    expect(quiet.lines.map((l) => [l.level, l.context])).toEqual([['info', 'NestApplication']]);

    const verbose = capture('debug');
    new PinoLoggerService(verbose.logger).log('Mapped {/health, GET} route', 'RouterExplorer');
    expect(verbose.lines).toEqual([
      expect.objectContaining({ level: 'debug', context: 'RouterExplorer' }),
    ]);
  });
});
