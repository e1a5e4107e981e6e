import { HttpStatus } from '@nestjs/common';
import { defineErrors, DomainError } from '../common/errors';

/** The codes webhooks owns. */
export const WEBHOOKS_ERRORS = defineErrors({
  WEBHOOK_NOT_FOUND: { status: HttpStatus.NOT_FOUND, title: 'The webhook does not exist' },
  WEBHOOK_QUOTA_EXCEEDED: {
    status: HttpStatus.CONFLICT,
    title: 'The webhook quota is used up',
  },
});

export class WebhookNotFoundError extends DomainError {
  constructor(id: string) {
    super(WEBHOOKS_ERRORS.WEBHOOK_NOT_FOUND, `No webhook ${id} in this namespace.`);
  }
}

export class WebhookQuotaExceededError extends DomainError {
  constructor(max: number) {
    super(
      WEBHOOKS_ERRORS.WEBHOOK_QUOTA_EXCEEDED,
      `This namespace has ${max} webhooks already, the most allowed.`,
    );
  }
}
