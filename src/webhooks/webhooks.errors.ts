import { HttpStatus } from '@nestjs/common';
import { defineErrors, DomainError } from '../common/errors';
import type { LimitMembers } from '../plans';

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

/** The deployment's webhook limit per namespace (WEBHOOK_MAX), reached without a plan. */
export class WebhookQuotaExceededError extends DomainError {
  constructor(members: LimitMembers) {
    super(
      WEBHOOKS_ERRORS.WEBHOOK_QUOTA_EXCEEDED,
      `This namespace has ${members.usage} webhooks; at most ${members.max} are allowed (WEBHOOK_MAX). Delete one to add another.`,
      undefined,
      { ...members },
    );
  }
}
