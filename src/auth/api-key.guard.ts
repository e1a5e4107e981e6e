import { Inject, Injectable, type CanActivate, type ExecutionContext } from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import type { Request, Response } from 'express';
import { DomainError, ForbiddenError, UnauthenticatedError } from '../common/errors';
import { markRateLimited } from '../rate-limit';
import { hasScope } from './access-grant';
import { digestApiKey } from './api-key.secret';
import { ApiKeyService, type KeyIdentity } from './api-key.service';
import { AuthFailureLimiter } from './auth-failure.limiter';
import {
  BranchMismatchError,
  InvalidBranchError,
  IpNotAllowedError,
  TooManyFailedAuthenticationsError,
} from './auth.errors';
import { ALLOWED_KINDS, IS_PUBLIC, type RequestWithPrincipal } from './auth.decorators';
import { isValidBranch } from './branch';
import { grantOf, type Principal, type PrincipalKind } from './principal';
import { addressAllowed } from './allowed-ips';
import { insufficientScope, RequiredScopes } from './required-scopes';
import {
  TEAM_ID_PATTERN,
  TEAM_MEMBERSHIP_LOOKUP,
  type TeamMembershipLookup,
} from './team-memberships.port';

/** Reads the key from X-Api-Key, or from `Authorization: Bearer <key>`. */
export function presentedKey(req: Request): string | undefined {
  const header = req.headers['x-api-key'];
  if (typeof header === 'string' && header.length > 0) return header;
  const authorization = req.headers.authorization;
  const match =
    typeof authorization === 'string' ? /^Bearer\s+(\S+)\s*$/i.exec(authorization) : null;
  return match?.[1];
}

/** SHA-256 of the presented key (keys are looked up by digest), or null without one. */
function presentedKeyDigest(req: Request): string | null {
  const key = presentedKey(req);
  return key ? digestApiKey(key) : null;
}

/**
 * Global, deny-by-default guard: every route needs @Public() or @Auth(...kinds). Resolves the
 * principal, refuses it a route whose scope (@NeedsScope) its grant lacks (INSUFFICIENT_SCOPE),
 * resolves the request branch (key-bound branch, else X-Branch, else ''), and counts failed
 * authentications per client address (AuthFailureLimiter), bounding what guessing costs.
 */
@Injectable()
export class ApiKeyGuard implements CanActivate {
  private readonly scopes = new RequiredScopes();

  constructor(
    private readonly reflector: Reflector,
    private readonly keys: ApiKeyService,
    private readonly failures: AuthFailureLimiter,
    @Inject(TEAM_MEMBERSHIP_LOOKUP) private readonly teams: TeamMembershipLookup,
  ) {}

  async canActivate(context: ExecutionContext): Promise<boolean> {
    const targets = [context.getHandler(), context.getClass()];
    if (this.reflector.getAllAndOverride<boolean>(IS_PUBLIC, targets)) return true;

    const http = context.switchToHttp();
    const req = http.getRequest<RequestWithPrincipal>();
    // Without a key nothing is guessed: a plain 401, limited by the per-address rate limit only.
    const digest = presentedKeyDigest(req);
    if (!digest) throw new UnauthenticatedError();
    const identity = await this.authenticate(req, http.getResponse<Response>(), digest);
    const { boundBranch } = identity;
    // A valid key from outside its allowedIps: refused before anything else is read, neither a
    // failed authentication nor (the throttler runs after this guard) charged to the rate limit.
    if (!addressAllowed(grantOf(identity.principal), req.ip))
      throw new IpNotAllowedError(req.ip ?? 'an unknown address');
    const principal = await this.actingFor(req, identity.principal);

    const allowed =
      this.reflector.getAllAndOverride<PrincipalKind[] | undefined>(ALLOWED_KINDS, targets) ?? [];
    if (!allowed.includes(principal.kind)) {
      throw new ForbiddenError(
        allowed.length === 0
          ? 'This route is not open to API keys.'
          : `A ${principal.kind} key may not call this route; allowed: ${allowed.join(', ')}.`,
      );
    }

    const scope = this.scopes.of(this.reflector, context);
    if (scope !== null && !hasScope(grantOf(principal), scope))
      throw insufficientScope(http.getResponse<Response>(), scope);

    req.principal = { ...principal, branch: requestBranch(req, boundBranch) };
    return true;
  }

  /**
   * With `X-Team: <teamId>` a member's root key acts for the team, exactly as a team key of the
   * same branch binding would; anything else with X-Team is refused. Membership is read on every
   * such request, so a removal takes effect at once.
   */
  private async actingFor(req: Request, principal: Principal): Promise<Principal> {
    const sent = req.headers['x-team'];
    if (sent === undefined) return principal;
    // Node joins a repeated X-Team into one value; a string array is not expected, but typed.
    const header = Array.isArray(sent) ? sent.join(', ') : sent;
    if (principal.kind !== 'root')
      throw new ForbiddenError('X-Team is for root keys of team members.');
    // Whatever does not name a team of the caller's — a malformed id included (a repeated
    // header arrives joined, which is malformed) — is the same refusal: not a member.
    const member =
      TEAM_ID_PATTERN.test(header) && (await this.teams.roleOf(header, principal.subject)) !== null;
    if (!member) throw new ForbiddenError(`You are not a member of team ${header}.`);
    return {
      kind: 'team',
      keyId: principal.keyId,
      teamId: header,
      branch: principal.branch,
      boundBranch: principal.boundBranch,
      actingSubject: principal.subject,
      // A limited key acting for a team keeps its limits.
      ...(principal.grant && { grant: principal.grant }),
    };
  }

  /**
   * The budget throttles guessing, not the address: clients behind one NAT or proxy share it, so
   * an address over budget still has its key checked — the operator key and keys this instance
   * has cached cost no command; any other key waits for the address's paced lookup (one command
   * per AUTH_FAILURE_LOOKUP_INTERVAL_MS on this instance, see OverBudgetKeyLookups). A wrong key
   * from such an address gets 429 and records nothing more.
   */
  private async authenticate(req: Request, res: Response, digest: string): Promise<KeyIdentity> {
    const address = req.ip ?? 'unknown';
    try {
      return this.failures.blockedFor(address) === null
        ? await this.keys.authenticate(digest)
        : await this.keys.authenticateOverBudget(address, digest);
    } catch (error) {
      if (error instanceof UnauthenticatedError) {
        // Known over budget (also when that was learnt during the lookup): nothing to record.
        const retryAfter =
          this.failures.blockedFor(address) ?? (await this.failures.recordFailure(address));
        if (retryAfter !== null) throw tooManyFailures(res, retryAfter);
      }
      throw error;
    }
  }
}

function tooManyFailures(res: Response, retryAfterSeconds: number): DomainError {
  res.setHeader('Retry-After', String(retryAfterSeconds));
  markRateLimited(res, 'auth_failures');
  return new TooManyFailedAuthenticationsError();
}

function requestBranch(req: Request, boundBranch: string | null): string {
  const header = req.headers['x-branch'];
  if (Array.isArray(header)) {
    throw new InvalidBranchError('Send X-Branch at most once.');
  }
  if (header !== undefined && !isValidBranch(header)) {
    throw new InvalidBranchError(
      "X-Branch must be '' or match ^[a-z0-9][a-z0-9._-]{0,62}$.",
      'X-Branch',
    );
  }
  if (boundBranch !== null) {
    if (header !== undefined && header !== boundBranch) {
      throw new BranchMismatchError(`The API key is bound to branch '${boundBranch}'.`);
    }
    return boundBranch;
  }
  return header ?? '';
}
