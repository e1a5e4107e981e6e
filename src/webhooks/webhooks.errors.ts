import { DomainError } from '../common/errors';

export class WebhookNotFoundError extends DomainError {
  constructor(id: string) {
    super('WEBHOOK_NOT_FOUND', `No webhook ${id} in this namespace.`);
  }
}

export class WebhookQuotaExceededError extends DomainError {
  constructor(max: number) {
    super(
      'WEBHOOK_QUOTA_EXCEEDED',
      `This namespace has ${max} webhooks already, the most allowed.`,
    );
  }
}
