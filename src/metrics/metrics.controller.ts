import { Controller, Get, Header, UseGuards } from '@nestjs/common';
import { ApiExcludeController } from '@nestjs/swagger';
import { Registry } from 'prom-client';
import { SkipThrottle } from '@nestjs/throttler';
import { Public } from '../auth';
import { MetricsTokenGuard } from './metrics-token.guard';
import { ServiceMetrics } from './service-metrics';

/**
 * Prometheus scrape endpoint. Outside the OpenAPI document: it is the operator's, not the API's
 * (no API key; its own optional token; a format OpenAPI does not describe), like /docs. It
 * bypasses the per-key rate limit, for a scraper must never be refused for scraping.
 */
@ApiExcludeController()
@Controller('metrics')
@Public()
@SkipThrottle()
@UseGuards(MetricsTokenGuard)
export class MetricsController {
  constructor(private readonly metrics: ServiceMetrics) {}

  @Get()
  @Header('Content-Type', Registry.PROMETHEUS_CONTENT_TYPE)
  scrape(): Promise<string> {
    return this.metrics.scrape();
  }
}
