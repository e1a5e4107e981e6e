import {
  Inject,
  Injectable,
  type CallHandler,
  type ExecutionContext,
  type NestInterceptor,
} from '@nestjs/common';
import type { Request } from 'express';
import type { Observable } from 'rxjs';
import { APP_CONFIG, type AppConfig } from '../config';
import { dataBudget, guardRawBody, type JsonBudget } from './json-guard';

/**
 * Runs the data guard's first pass on the raw JSON body. Interceptors run before pipes, so the
 * guard sees exactly what the client sent (the validation pipe would strip prototype keys).
 */
@Injectable()
export class DataBodyInterceptor implements NestInterceptor {
  private readonly budget: JsonBudget;

  constructor(@Inject(APP_CONFIG) config: AppConfig) {
    this.budget = dataBudget(config.limits);
  }

  intercept(context: ExecutionContext, next: CallHandler): Observable<unknown> {
    guardRawBody(context.switchToHttp().getRequest<Request>().body, this.budget);
    return next.handle();
  }
}
