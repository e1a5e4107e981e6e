import { Injectable } from '@nestjs/common';
import type { Principal } from '../auth';
import { ApiKeyService } from '../auth/api-key.service';
import { ProfileRepository } from './profile.repository';
import { ProfileService } from './profile.service';

type RootPrincipal = Extract<Principal, { kind: 'root' }>;

/**
 * Deleting a sub profile: its keys stop working first, then the profile goes. A crash in
 * between leaves a profile without keys, which the same request deletes when repeated. The data
 * the sub profile owned stays where it is (docs/profiles.md).
 */
@Injectable()
export class ProfileDeletionService {
  constructor(
    private readonly profiles: ProfileService,
    private readonly repository: ProfileRepository,
    private readonly keys: ApiKeyService,
  ) {}

  async deleteSubProfile(
    principal: RootPrincipal,
    accountId: string,
    clientId: string | undefined,
  ): Promise<void> {
    const profile = await this.profiles.getSubProfile(principal, accountId, clientId);
    await this.keys.revokeForSubProfile(principal.subject, profile.id);
    await this.repository.deleteByKey({
      subject: profile.subject,
      branch: profile.branch,
      clientId: profile.clientId,
      accountId: profile.accountId,
    });
  }
}
