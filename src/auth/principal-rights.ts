import { Inject, Injectable } from '@nestjs/common';
import { BackgroundTasks } from '../common/scheduling/background-tasks';
import { ForbiddenError, UnauthenticatedError, type DomainError } from '../common/errors';
import { APP_CONFIG, type AppConfig } from '../config';
import { ApiKeyRepository, type ApiKeyRecord } from './api-key.repository';
import { keyIdOf, type CustomerPrincipal } from './principal';
import { TEAM_MEMBERSHIP_LOOKUP, type TeamMembershipLookup } from './team-memberships.port';
import { TOKEN_PRINCIPALS, type TokenPrincipals } from './token-principals.port';

/** Why a principal lost the right to go on reading (the final event of a stream names it). */
export type RightsLossReason =
  'KEY_REVOKED' | 'KEY_EXPIRED' | 'TOKEN_EXPIRED' | 'IDENTITY_REMOVED' | 'TEAM_MEMBERSHIP_ENDED';

export interface RightsLoss {
  reason: RightsLossReason;
  detail: string;
}

/** What one check read of the database: the keys and the memberships of the watched principals. */
export interface RightsFacts {
  /** The watched keys that still exist, by id. */
  keys: Map<string, ApiKeyRecord>;
  /** `membershipKey(teamId, subject)` of the watched memberships that still exist. */
  memberships: Set<string>;
  /** The watched token identities that still exist (not unlinked, not erased). */
  identities: Set<string>;
  /** When the check started (this instance's clock): expiry is judged against it. */
  now: Date;
}

/**
 * One condition a principal must still meet; null when it does, else what it lost. The checks
 * run in order and the first loss is the verdict: a later condition (e.g. a key's scope, once
 * keys have scopes) is one more entry here, fed by the same batched read.
 */
export type RightsRule = (principal: CustomerPrincipal, facts: RightsFacts) => RightsLoss | null;

export const RIGHTS_RULES: readonly RightsRule[] = [
  ({ credential }, { keys }) =>
    credential.kind !== 'key' || keys.has(credential.keyId)
      ? null
      : {
          reason: 'KEY_REVOKED',
          detail:
            'The API key was revoked (deleted, or with the sub profile it acts as, or with its account).',
        },
  ({ credential }, { keys, now }) => {
    const expiresAt = credential.kind === 'key' ? keys.get(credential.keyId)?.expiresAt : null;
    return expiresAt && expiresAt <= now
      ? { reason: 'KEY_EXPIRED', detail: 'The API key has expired.' }
      : null;
  },
  ({ credential }, { now }) =>
    credential.kind === 'token' && credential.expiresAt <= now
      ? { reason: 'TOKEN_EXPIRED', detail: 'The access token has expired.' }
      : null,
  ({ credential }, { identities }) =>
    credential.kind === 'token' && !identities.has(credential.identityId)
      ? {
          reason: 'IDENTITY_REMOVED',
          detail: "The token's identity was unlinked from its user, or the user was erased.",
        }
      : null,
  (principal, { memberships }) =>
    principal.kind === 'team' &&
    principal.actingSubject !== undefined &&
    !memberships.has(membershipKey(principal.teamId, principal.actingSubject))
      ? {
          reason: 'TEAM_MEMBERSHIP_ENDED',
          detail: `You are no longer a member of team ${principal.teamId}.`,
        }
      : null,
];

export function membershipKey(teamId: string, subject: string): string {
  return `${teamId}\u0000${subject}`;
}

/** The problem a request answers with once its principal lost its rights (a long poll). */
export function rightsLossError(loss: RightsLoss): DomainError {
  return loss.reason === 'TEAM_MEMBERSHIP_ENDED'
    ? new ForbiddenError(loss.detail)
    : new UnauthenticatedError(loss.detail);
}

/** A principal whose rights are followed while it reads (a stream, a long poll). */
export interface RightsWatch {
  /** What it lost; null while it holds its rights. */
  readonly lost: RightsLoss | null;
  /**
   * Resolves after a check that started after this call: with the loss, or null when the
   * principal still held its rights then. So anything read before the call was written while
   * it held them when this resolves null. Rejects when the database could not be asked.
   */
  confirm(): Promise<RightsLoss | null>;
  stop(): void;
}

interface Watcher {
  principal: CustomerPrincipal;
  lost: RightsLoss | null;
  onLost: (loss: RightsLoss) => void;
}

/**
 * Follows the rights of the principals of this instance's open streams and long polls against
 * the database, the only place every instance sees a revocation: every STREAM_RIGHTS_CHECK_MS
 * (a background task) and whenever a reader is about to deliver what it read (`confirm`). One
 * check asks about every watched principal at once — one `find` of their keys by id, plus one of
 * their memberships when some act for a team (X-Team) and one of their identities when some came
 * with an access token — however many streams are open; checks
 * asked for while one runs share the next one. A principal that lost a right is told once
 * (`onLost`) and its watch stays lost.
 */
@Injectable()
export class PrincipalRights {
  private readonly watchers = new Set<Watcher>();
  private running: Promise<void> | null = null;
  private queued: Promise<void> | null = null;
  readonly intervalMs: number;

  constructor(
    private readonly keys: ApiKeyRepository,
    @Inject(TEAM_MEMBERSHIP_LOOKUP) private readonly teams: TeamMembershipLookup,
    @Inject(TOKEN_PRINCIPALS) private readonly tokens: TokenPrincipals,
    @Inject(APP_CONFIG) config: AppConfig,
    tasks: BackgroundTasks,
  ) {
    this.intervalMs = config.rightsCheckMs;
    tasks.register({
      name: 'stream-rights',
      intervalMs: config.rightsCheckMs,
      run: () => (this.watchers.size > 0 ? this.next() : Promise.resolve()),
    });
  }

  /** Principals followed now. */
  get watched(): number {
    return this.watchers.size;
  }

  watch(principal: CustomerPrincipal, onLost: (loss: RightsLoss) => void): RightsWatch {
    const watcher: Watcher = { principal, lost: null, onLost };
    this.watchers.add(watcher);
    return {
      get lost() {
        return watcher.lost;
      },
      confirm: async () => {
        if (watcher.lost) return watcher.lost;
        await this.next();
        return watcher.lost;
      },
      stop: () => {
        this.watchers.delete(watcher);
      },
    };
  }

  /** A check that starts after this call (after the one running, if any); shared by callers. */
  private next(): Promise<void> {
    if (this.queued) return this.queued;
    const before = this.running ?? Promise.resolve();
    const queued = before
      .catch(() => undefined)
      .then(() => {
        this.queued = null;
        const run = this.check();
        this.running = run;
        return run.finally(() => {
          if (this.running === run) this.running = null;
        });
      });
    this.queued = queued;
    return queued;
  }

  private async check(): Promise<void> {
    const now = new Date();
    const watchers = [...this.watchers].filter((watcher) => watcher.lost === null);
    if (watchers.length === 0) return;
    const keyIds = new Set<string>();
    const identityIds = new Set<string>();
    for (const { principal } of watchers) {
      const keyId = keyIdOf(principal);
      if (keyId !== null) keyIds.add(keyId);
      else if (principal.credential.kind === 'token')
        identityIds.add(principal.credential.identityId);
    }
    const pairs = new Map<string, { teamId: string; subject: string }>();
    for (const { principal } of watchers)
      if (principal.kind === 'team' && principal.actingSubject !== undefined)
        pairs.set(membershipKey(principal.teamId, principal.actingSubject), {
          teamId: principal.teamId,
          subject: principal.actingSubject,
        });
    const [records, members, identities] = await Promise.all([
      keyIds.size > 0 ? this.keys.findManyById([...keyIds]) : Promise.resolve([]),
      pairs.size > 0 ? this.teams.existingAmong([...pairs.values()]) : Promise.resolve([]),
      identityIds.size > 0 ? this.tokens.existingAmong([...identityIds]) : Promise.resolve([]),
    ]);
    const facts: RightsFacts = {
      keys: new Map(records.map((record) => [record.id, record])),
      memberships: new Set(members.map((member) => membershipKey(member.teamId, member.subject))),
      identities: new Set(identities),
      now,
    };
    for (const watcher of watchers) {
      if (watcher.lost || !this.watchers.has(watcher)) continue;
      const loss = verdictOf(watcher.principal, facts);
      if (!loss) continue;
      watcher.lost = loss;
      watcher.onLost(loss);
    }
  }
}

/** The first right of RIGHTS_RULES the principal no longer has; null: it has them all. */
export function verdictOf(principal: CustomerPrincipal, facts: RightsFacts): RightsLoss | null {
  for (const rule of RIGHTS_RULES) {
    const loss = rule(principal, facts);
    if (loss) return loss;
  }
  return null;
}
