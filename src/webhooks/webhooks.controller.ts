import { Body, Controller, Delete, Get, HttpCode, HttpStatus, Param, Post } from '@nestjs/common';
import {
  ApiBadRequestResponse,
  ApiConflictResponse,
  ApiNoContentResponse,
  ApiNotFoundResponse,
  ApiOkResponse,
  ApiTags,
} from '@nestjs/swagger';
import { Auth, CurrentPrincipal, type CustomerPrincipal, NeedsScope } from '../auth';
import { ProblemDto } from '../common/errors';
import { CreatedWebhookDto, CreateWebhookDto, DeliveryDto, WebhookDto } from './dto/webhook.dto';
import { WebhooksService } from './webhooks.service';

/** Deliveries listed per webhook. */
const DELIVERIES_SHOWN = 50;

/** Webhooks of the caller's namespace in the request branch (root and team keys). */
@ApiTags('webhooks')
@Controller('webhooks')
@NeedsScope('events:read')
@Auth('root', 'team')
export class WebhooksController {
  constructor(private readonly webhooks: WebhooksService) {}

  /**
   * Registers an endpoint: it receives the namespace's events of the given types from now on, as
   * signed POSTs (Standard Webhooks). The secret is shown once.
   */
  @Post()
  @HttpCode(HttpStatus.OK)
  @ApiOkResponse({ type: CreatedWebhookDto })
  @ApiBadRequestResponse({
    type: ProblemDto,
    description:
      'A bad body; a URL that is not http(s), does not resolve, or reaches a private address',
  })
  @ApiConflictResponse({
    type: ProblemDto,
    description:
      "WEBHOOK_QUOTA_EXCEEDED: the namespace has WEBHOOK_MAX webhooks (no plan); PLAN_LIMIT_EXCEEDED: as many as its plan's webhooks. Both with members `limit`, `max`, `usage`, `plan`",
  })
  async createWebhook(
    @CurrentPrincipal() principal: CustomerPrincipal,
    @Body() body: CreateWebhookDto,
  ): Promise<CreatedWebhookDto> {
    const { webhook, secret } = await this.webhooks.create(principal, body);
    return { webhook: WebhookDto.from(webhook), secret };
  }

  @Get()
  @ApiOkResponse({ type: [WebhookDto] })
  async listWebhooks(@CurrentPrincipal() principal: CustomerPrincipal): Promise<WebhookDto[]> {
    return (await this.webhooks.list(principal)).map((w) => WebhookDto.from(w));
  }

  /** Removes the endpoint and its pending deliveries. */
  @Delete(':id')
  @HttpCode(HttpStatus.NO_CONTENT)
  @ApiNoContentResponse({ description: 'Removed' })
  @ApiNotFoundResponse({ type: ProblemDto, description: 'WEBHOOK_NOT_FOUND' })
  async deleteWebhook(
    @CurrentPrincipal() principal: CustomerPrincipal,
    @Param('id') id: string,
  ): Promise<void> {
    await this.webhooks.remove(principal, id);
  }

  /** The newest deliveries, with every attempt. */
  @Get(':id/deliveries')
  @ApiOkResponse({ type: [DeliveryDto] })
  @ApiNotFoundResponse({ type: ProblemDto, description: 'WEBHOOK_NOT_FOUND' })
  async listWebhookDeliveries(
    @CurrentPrincipal() principal: CustomerPrincipal,
    @Param('id') id: string,
  ): Promise<DeliveryDto[]> {
    return (await this.webhooks.deliveriesOf(principal, id, DELIVERIES_SHOWN)).map((d) =>
      DeliveryDto.from(d),
    );
  }
}
