import { Controller, Get, Inject } from '@nestjs/common';
import { ApiOkResponse, ApiServiceUnavailableResponse, ApiTags } from '@nestjs/swagger';
import { HealthCheck, HealthCheckService, MongooseHealthIndicator, type HealthCheckResult } from '@nestjs/terminus';
import { SkipThrottle } from '@nestjs/throttler';
import { Public } from '../auth';
import { ProblemDto } from '../common/errors';
import { APP_CONFIG, type AppConfig } from '../config';

@ApiTags('health')
@Controller('health')
@Public()
@SkipThrottle()
export class HealthController {
  constructor(
    private readonly health: HealthCheckService,
    private readonly mongoose: MongooseHealthIndicator,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}

  /** Liveness: the process is up and serving HTTP. Does not touch the database. */
  @Get()
  @HealthCheck()
  @ApiOkResponse({ description: 'The process is alive' })
  checkLiveness(): Promise<HealthCheckResult> {
    return this.health.check([]);
  }

  /** Readiness: the database answers a ping within the server-selection timeout. */
  @Get('ready')
  @HealthCheck()
  @ApiOkResponse({ description: 'Ready to serve' })
  @ApiServiceUnavailableResponse({ type: ProblemDto, description: 'The database is not reachable' })
  checkReadiness(): Promise<HealthCheckResult> {
    return this.health.check([
      () => this.mongoose.pingCheck('database', { timeout: this.config.database.serverSelectionTimeoutMs }),
    ]);
  }
}
