import {
  applyDecorators,
  createParamDecorator,
  SetMetadata,
  type ExecutionContext,
} from '@nestjs/common';
import {
  ApiBearerAuth,
  ApiExtension,
  ApiForbiddenResponse,
  ApiHeader,
  ApiSecurity,
  ApiTooManyRequestsResponse,
  ApiUnauthorizedResponse,
} from '@nestjs/swagger';
import type { Request } from 'express';
import { ProblemDto } from '../common/errors';
import {
  API_KEY_SCHEME,
  AUTH_HEADERS_FIRST,
  BEARER_SCHEME,
  BRANCH_HEADER,
  REQUIRED_SCOPE_EXTENSION,
  TEAM_HEADER,
} from '../common/http/openapi-shared';
import type { Scope } from './access-grant';
import type { Principal, PrincipalKind } from './principal';
import { TEAM_ID_PATTERN } from './team-memberships.port';

export const IS_PUBLIC = 'auth:public';
export const ALLOWED_KINDS = 'auth:kinds';
/** The scope a route needs (a Scope), or null where it needs none; absent: undeclared. */
export const REQUIRED_SCOPE = 'auth:scope';

/**
 * Opts a route out of authentication (health checks, docs); it needs no scope, for nobody's
 * key is checked there.
 */
export const Public = (): MethodDecorator & ClassDecorator =>
  applyDecorators(SetMetadata(IS_PUBLIC, true), noScope());

/**
 * The scope a key must hold to call the route (docs/keys.md, "Authentication", the scope table); a
 * key without it gets 403 INSUFFICIENT_SCOPE. On a class it applies to every route of the
 * controller; a route's own declaration overrides its class's. Every route declares a scope or
 * @NeedsNoScope (src/routes.spec.ts), so none is added unscoped.
 */
export function NeedsScope(scope: Scope): MethodDecorator & ClassDecorator {
  return applyDecorators(
    SetMetadata(REQUIRED_SCOPE, scope),
    ApiExtension(REQUIRED_SCOPE_EXTENSION, scope),
  );
}

/**
 * A route every key of its kinds may call whatever scopes it holds: GET /me (a client learns
 * there what its key may do), and the operator's routes under /admin (the operator key holds
 * every scope, and no scope names the operator's work).
 */
export const NeedsNoScope = (): MethodDecorator & ClassDecorator => noScope();

/** No scope; the extension's null (dropped from the document) keeps a class's scope off the route. */
function noScope(): MethodDecorator & ClassDecorator {
  return applyDecorators(
    SetMetadata(REQUIRED_SCOPE, null),
    ApiExtension(REQUIRED_SCOPE_EXTENSION, null),
  );
}

/**
 * Allows the given principal kinds and documents the security schemes and the 401/403/429
 * problems in OpenAPI. Routes with neither @Auth nor @Public are denied to everyone.
 */
export function Auth(...kinds: PrincipalKind[]): MethodDecorator & ClassDecorator {
  return applyDecorators(...authDecorators(kinds, forbiddenResponse(kinds)));
}

/**
 * @Auth for a route that describes its own 403, documented the way a controller-wide @Auth
 * documents its routes: the route's description (`forbidden`) stands in place of FORBIDDEN's,
 * and the authentication headers come first among the operation's parameters. The published
 * parameter order is kept because generated clients may take parameters by position.
 */
export function AuthHeadersFirst(options: {
  kinds: PrincipalKind[];
  forbidden: string;
}): MethodDecorator {
  return applyDecorators(
    ...authDecorators(
      options.kinds,
      ApiForbiddenResponse({ type: ProblemDto, description: options.forbidden }),
    ),
    ApiExtension(AUTH_HEADERS_FIRST, true),
  );
}

function forbiddenResponse(kinds: PrincipalKind[]): MethodDecorator & ClassDecorator {
  const origin = kinds.includes('publishable')
    ? "; ORIGIN_NOT_ALLOWED: a publishable key sent with an Origin outside the key's allowedOrigins (answered without CORS headers)"
    : '';
  return ApiForbiddenResponse({
    type: ProblemDto,
    description: `FORBIDDEN: the key is not one of: ${kinds.join(', ')}${origin}`,
  });
}

function authDecorators(
  kinds: PrincipalKind[],
  forbidden: MethodDecorator & ClassDecorator,
): (MethodDecorator & ClassDecorator)[] {
  const decorators = [
    SetMetadata(ALLOWED_KINDS, kinds),
    ApiSecurity(API_KEY_SCHEME),
    ApiBearerAuth(BEARER_SCHEME),
    ApiUnauthorizedResponse({
      type: ProblemDto,
      description:
        'UNAUTHENTICATED: no key, or an unknown, revoked or expired key; INVALID_TOKEN: an access token refused (WWW-Authenticate: Bearer error="invalid_token" names the failed check)',
    }),
    forbidden,
    ApiTooManyRequestsResponse({
      type: ProblemDto,
      description:
        'RATE_LIMITED: rate limit of the key exceeded, or a wrong key from a client address over its failed-authentication budget (valid keys from that address keep working); see Retry-After',
    }),
  ];
  if (!kinds.includes('operator')) {
    decorators.push(
      ApiHeader({
        name: BRANCH_HEADER,
        required: false,
        description:
          "Context branch ('' = standard). A key bound to a branch uses its own; a contradicting value is a 403 BRANCH_MISMATCH, an invalid name a 400 INVALID_BRANCH.",
        // '' is the standard branch.
        schema: { type: 'string', pattern: '^(|[a-z0-9][a-z0-9._-]{0,62})$' },
      }),
    );
  }
  if (kinds.includes('team')) {
    decorators.push(
      ApiHeader({
        name: TEAM_HEADER,
        required: false,
        description:
          "With a root key of a member of the team: act for the team, as the team's key would. A value that names no team of the caller's (not a member, no such team, not a team id) → 403 FORBIDDEN; with another kind of key → 403 FORBIDDEN.",
        schema: { type: 'string', pattern: TEAM_ID_PATTERN.source },
      }),
    );
  }
  return decorators;
}

export type RequestWithPrincipal = Request & { principal?: Principal };

/** The principal ApiKeyGuard attached to the request. */
export const CurrentPrincipal = createParamDecorator(
  (_data: unknown, ctx: ExecutionContext): Principal => {
    const principal = ctx.switchToHttp().getRequest<RequestWithPrincipal>().principal;
    if (!principal) throw new Error('CurrentPrincipal used on a route without @Auth');
    return principal;
  },
);
