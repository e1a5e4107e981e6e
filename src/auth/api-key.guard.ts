import { Inject, Injectable, type CanActivate, type ExecutionContext } from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import type { Request, Response } from 'express';
import { DomainError, ForbiddenError, UnauthenticatedError } from '../common/errors';
import { markRateLimited } from '../rate-limit';
import { FULL_GRANT, hasScope, type AccessGrant } from './access-grant';
import { digestApiKey } from './api-key.secret';
import { ApiKeyService, type KeyIdentity } from './api-key.service';
import { AuthFailureLimiter } from './auth-failure.limiter';
import {
  BranchMismatchError,
  InsufficientScopeError,
  InvalidBranchError,
  IpNotAllowedError,
  OriginNotAllowedError,
  TooManyFailedAuthenticationsError,
} from './auth.errors';
import { isJwtShaped } from './oidc/token-shape';
import { CORS_EXPOSED_HEADERS, CORS_RESPONSE_HEADERS } from '../common/http/cors';
import { TokenVerifier } from './oidc/token-verifier';
import type { VerifiedToken } from './oidc/verified-token';
import { TOKEN_PRINCIPALS, type TokenPrincipals } from './token-principals.port';
import type { RequestWithPrincipal } from './auth.decorators';
import { isValidBranch } from './branch';
import { grantOf, type Principal } from './principal';
import { addressAllowed } from './allowed-ips';
import { RouteAccess } from './route-access';
import {
  TEAM_ID_PATTERN,
  TEAM_MEMBERSHIP_LOOKUP,
  type TeamMembershipLookup,
} from './team-memberships.port';

function bearerOf(req: Request): string | undefined {
  const authorization = req.headers.authorization;
  const match =
    typeof authorization === 'string' ? /^Bearer\s+(\S+)\s*$/i.exec(authorization) : null;
  return match?.[1];
}

/**
 * What the request authenticates with: an access token (`Authorization: Bearer <JWT>`, when
 * issuers are configured and no X-Api-Key is sent), else the SHA-256 of its key (keys are looked
 * up by digest), or null without either.
 */
function presentedCredential(
  req: Request,
  tokens: boolean,
): { token: string } | { digest: string } | null {
  const header = req.headers['x-api-key'];
  if (typeof header === 'string' && header.length > 0) return { digest: digestApiKey(header) };
  const bearer = bearerOf(req);
  if (!bearer) return null;
  return tokens && isJwtShaped(bearer) ? { token: bearer } : { digest: digestApiKey(bearer) };
}

/**
 * Global, deny-by-default guard: every route needs @Public() or @Auth(...kinds). Resolves the
 * principal from an API key (X-Api-Key or `Authorization: Bearer <key>`) or an identity
 * provider's access token (`Authorization: Bearer <JWT>`, src/auth/oidc), refuses it a route
 * whose scope (@NeedsScope) its grant lacks (INSUFFICIENT_SCOPE), resolves the request branch
 * (key-bound branch, else X-Branch, else ''), and counts failed key authentications per client
 * address (AuthFailureLimiter), bounding what guessing costs.
 */
@Injectable()
export class ApiKeyGuard implements CanActivate {
  private readonly routes = new RouteAccess();

  constructor(
    private readonly reflector: Reflector,
    private readonly keys: ApiKeyService,
    private readonly failures: AuthFailureLimiter,
    private readonly tokens: TokenVerifier,
    @Inject(TOKEN_PRINCIPALS) private readonly tokenPrincipals: TokenPrincipals,
    @Inject(TEAM_MEMBERSHIP_LOOKUP) private readonly teams: TeamMembershipLookup,
  ) {}

  /**
   * An access token: verified (signature, issuer, audience, times) before anything is read, then
   * resolved to the root or sub profile its identity and client act as (TokenPrincipals). A
   * refused token is answered 401 INVALID_TOKEN with `WWW-Authenticate: Bearer
   * error="invalid_token"`; it writes nothing and is not a failed authentication of the address
   * (guessing a signature is not bounded by counting guesses). Its scopes become its grant.
   */
  private async fromToken(req: Request, token: string): Promise<KeyIdentity> {
    // A refusal carries its own headers (WWW-Authenticate, Retry-After): the problem filter sets them.
    const verified: VerifiedToken = await this.tokens.verify(token);
    const principal = await this.tokenPrincipals.principalOf(verified, requestBranch(req, null));
    const grant: AccessGrant | null =
      verified.scopes === null ? null : { ...FULL_GRANT, scopes: verified.scopes };
    return { principal: grant ? { ...principal, grant } : principal, boundBranch: null };
  }

  async canActivate(context: ExecutionContext): Promise<boolean> {
    const rules = this.routes.of(this.reflector, context);
    if (rules.isPublic) return true;

    const http = context.switchToHttp();
    const req = http.getRequest<RequestWithPrincipal>();
    const res = http.getResponse<Response>();
    // Without a key nothing is guessed: a plain 401, limited by the per-address rate limit only.
    const credential = presentedCredential(req, this.tokens.enabled);
    if (!credential) throw new UnauthenticatedError();
    const identity =
      'token' in credential
        ? await this.fromToken(req, credential.token)
        : await this.authenticate(req, res, credential.digest);
    const { boundBranch } = identity;
    // A valid key from outside its allowedIps: refused before anything else is read, neither a
    // failed authentication nor (the throttler runs after this guard) charged to the rate limit.
    if (!addressAllowed(grantOf(identity.principal), req.ip))
      throw new IpNotAllowedError(req.ip ?? 'an unknown address');
    const principal = await this.actingFor(req, identity.principal);
    // A publishable key answers browsers of its own origins only, whatever CORS_ORIGINS says.
    if (principal.kind === 'publishable') allowOriginOf(principal.allowedOrigins, req, res);

    const allowed = rules.kinds;
    if (!allowed.includes(principal.kind)) {
      throw new ForbiddenError(
        allowed.length === 0
          ? 'This route is not open to API keys.'
          : `A ${principal.kind} key may not call this route; allowed: ${allowed.join(', ')}.`,
      );
    }

    if (rules.scope !== null && !hasScope(grantOf(principal), rules.scope))
      throw new InsufficientScopeError(rules.scope);

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
      credential: principal.credential,
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

/**
 * CORS of a publishable key: a request whose `Origin` is one of the key's allowedOrigins gets
 * `Access-Control-Allow-Origin: <origin>` (and `Vary: Origin`), whatever CORS_ORIGINS allows; any
 * other `Origin` is refused, 403 without CORS headers (so the page cannot even read the refusal).
 * A request without `Origin` is not a browser's cross-origin request and goes on: the key is public
 * by design, and its rights (read through public.read only) are what protects the data.
 */
function allowOriginOf(allowed: readonly string[], req: Request, res: Response): void {
  res.vary('Origin');
  const origin = req.headers.origin;
  if (origin === undefined) return;
  if (!allowed.includes(origin)) {
    for (const header of CORS_RESPONSE_HEADERS) res.removeHeader(header);
    throw new OriginNotAllowedError(origin);
  }
  res.setHeader('Access-Control-Allow-Origin', origin);
  res.setHeader('Access-Control-Expose-Headers', CORS_EXPOSED_HEADERS.join(','));
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
