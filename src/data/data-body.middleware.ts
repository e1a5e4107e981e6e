import { Inject, Injectable, type NestMiddleware } from '@nestjs/common';
import type { NextFunction, Request, Response } from 'express';
import { APP_CONFIG, type AppConfig } from '../config';
import { dataBudget, guardRawBody, type JsonBudget } from './json-guard';

/**
 * Runs the data guard's first pass on the raw JSON body of every data route. Middleware runs
 * before pipes, so the guard sees exactly what the client sent (the validation pipe would strip
 * prototype keys). Middleware rather than an interceptor: an interceptor puts every data request
 * through an rxjs pipeline, which cost measurable throughput in the benchmarks.
 */
@Injectable()
export class DataBodyMiddleware implements NestMiddleware {
  private readonly budget: JsonBudget;

  constructor(@Inject(APP_CONFIG) config: AppConfig) {
    this.budget = dataBudget(config.limits);
  }

  use(req: Request, _res: Response, next: NextFunction): void {
    guardRawBody(req.body, this.budget);
    next();
  }
}
