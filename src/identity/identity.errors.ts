import { HttpStatus } from '@nestjs/common';
import { defineErrors, DomainError } from '../common/errors';

/** The codes the identity module owns: linking identities and provisioning users for them. */
export const IDENTITY_ERRORS = defineErrors({
  UNKNOWN_ISSUER: {
    status: HttpStatus.BAD_REQUEST,
    title: 'The issuer is not one of OIDC_ISSUERS',
    example: { detail: 'The issuer https://idp.example.com is not configured in OIDC_ISSUERS.' },
  },
  IDENTITY_TAKEN: {
    status: HttpStatus.CONFLICT,
    title: 'The identity belongs to another user',
    example: {
      detail:
        'The identity (https://idp.example.com, alice) belongs to another user; unlink it there first.',
    },
  },
  IDENTITY_EMAIL_TAKEN: {
    status: HttpStatus.FORBIDDEN,
    title: "Another user has the token's email",
    example: {
      detail:
        'A user with the email alice@example.com exists; the operator links the identity to it (PUT /admin/users/{subject}/identities).',
    },
  },
  TOKEN_PROFILE_NOT_FOUND: {
    status: HttpStatus.FORBIDDEN,
    title: "The token's client has no sub profile, and its issuer does not provision",
    example: {
      detail:
        "No sub profile with clientId mobile and accountId 248289761001 in branch '' exists, and the token's issuer does not provision profiles.",
    },
  },
});

export class UnknownIssuerError extends DomainError {
  constructor(issuer: string) {
    super(
      IDENTITY_ERRORS.UNKNOWN_ISSUER,
      `The issuer ${issuer} is not configured in OIDC_ISSUERS.`,
    );
  }
}

export class IdentityTakenError extends DomainError {
  constructor(issuer: string, subject: string) {
    super(
      IDENTITY_ERRORS.IDENTITY_TAKEN,
      `The identity (${issuer}, ${subject}) belongs to another user; unlink it there first.`,
    );
  }
}

/**
 * The first token of an unknown identity carries the email of an existing user: the service never
 * merges the identity into that user by email (any issuer could then take over the account).
 */
export class IdentityEmailTakenError extends DomainError {
  constructor(email: string) {
    super(
      IDENTITY_ERRORS.IDENTITY_EMAIL_TAKEN,
      `A user with the email ${email} exists; the operator links the identity to it (PUT /admin/users/{subject}/identities).`,
    );
  }
}

/** A token of a non-root client whose sub profile does not exist, from an issuer that does not provision. */
export class TokenProfileNotFoundError extends DomainError {
  constructor(clientId: string, accountId: string, branch: string) {
    super(
      IDENTITY_ERRORS.TOKEN_PROFILE_NOT_FOUND,
      `No sub profile with clientId ${clientId} and accountId ${accountId} in branch '${branch}' exists, and the token's issuer does not provision profiles.`,
    );
  }
}
