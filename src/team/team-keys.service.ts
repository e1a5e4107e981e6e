import { Injectable } from '@nestjs/common';
import type { Principal } from '../auth';
import type { ApiKeyRecord } from '../auth/api-key.repository';
import {
  ApiKeyService,
  type CreateTeamKeyRequest,
  type IssuedKey,
  type RotatedKey,
  type RotateKeyRequest,
  callerLimitsOf,
} from '../auth/api-key.service';
import { ForbiddenError } from '../common/errors';
import { TeamService } from './team.service';

type RootPrincipal = Extract<Principal, { kind: 'root' }>;

/**
 * A team's keys, managed by its `admin` members. A root key bound to a branch manages no team
 * keys: an unbound team key would reach beyond its branch.
 */
@Injectable()
export class TeamKeysService {
  constructor(
    private readonly teams: TeamService,
    private readonly keys: ApiKeyService,
  ) {}

  async list(principal: RootPrincipal, teamId: string): Promise<ApiKeyRecord[]> {
    await this.assertManager(principal, teamId);
    return this.keys.listForTeam(teamId);
  }

  async create(
    principal: RootPrincipal,
    teamId: string,
    request: CreateTeamKeyRequest,
  ): Promise<IssuedKey> {
    await this.assertManager(principal, teamId);
    // The admin member's key mints no more than it has.
    return this.keys.createForTeam(teamId, request, callerLimitsOf(principal));
  }

  /** A new secret for a team key (admin members, as for revoking it). */
  async rotate(
    principal: RootPrincipal,
    teamId: string,
    keyId: string,
    request: RotateKeyRequest,
  ): Promise<RotatedKey> {
    await this.assertManager(principal, teamId);
    return this.keys.rotateForTeam(teamId, keyId, request, callerLimitsOf(principal));
  }

  async revoke(principal: RootPrincipal, teamId: string, keyId: string): Promise<void> {
    await this.assertManager(principal, teamId);
    await this.keys.revokeForTeam(teamId, keyId);
  }

  private async assertManager(principal: RootPrincipal, teamId: string): Promise<void> {
    if (principal.boundBranch !== null)
      throw new ForbiddenError(
        `The API key is bound to branch '${principal.boundBranch}'; team keys are managed with an unbound root key.`,
      );
    await this.teams.assertAdmin(teamId, principal.subject);
  }
}
