import { Controller, Get } from '@nestjs/common';
import { ApiOkResponse, ApiServiceUnavailableResponse, ApiTags } from '@nestjs/swagger';
import { HealthCheck, HealthCheckService, type HealthCheckResult } from '@nestjs/terminus';
import { SkipThrottle } from '@nestjs/throttler';
import { Public } from '../auth';
import { ProblemDto } from '../common/errors';
import { DatabaseHealthIndicator } from './database.health';
import { ShutdownState } from './shutdown.state';

@ApiTags('health')
@Controller('health')
@Public()
@SkipThrottle()
export class HealthController {
  constructor(
    private readonly health: HealthCheckService,
    private readonly database: DatabaseHealthIndicator,
    private readonly shutdown: ShutdownState,
  ) {}

  /** Liveness: the process is up and serving HTTP. Does not touch the database. */
  @Get()
  @HealthCheck()
  @ApiOkResponse({ description: 'The process is alive' })
  checkLiveness(): Promise<HealthCheckResult> {
    return this.health.check([]);
  }

  /**
   * Readiness: not shutting down, and the database answers a ping within
   * DB_SERVER_SELECTION_TIMEOUT_MS (bounded by the driver settings in app.module.ts).
   */
  @Get('ready')
  @HealthCheck()
  @ApiOkResponse({ description: 'Ready to serve' })
  @ApiServiceUnavailableResponse({
    type: ProblemDto,
    description: 'The database is not reachable, or the process is shutting down',
  })
  checkReadiness(): Promise<HealthCheckResult> {
    return this.health.check([
      () => this.database.draining('shutdown', this.shutdown.draining),
      () => this.database.ping('database'),
    ]);
  }
}
