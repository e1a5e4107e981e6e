import { Injectable } from '@nestjs/common';
import { readableBy, type Principal } from '../auth';
import { CollectionNotAllowedError } from '../auth/auth.errors';
import { ApiKeyService } from '../auth/api-key.service';
import { ownerFieldOf } from '../data/query';
import { ItemBatchesService } from '../data';
import { profileActorOf, ProfileEvents } from './profile-events';
import { ProfileRepository } from './profile.repository';
import { ProfileService } from './profile.service';

type RootPrincipal = Extract<Principal, { kind: 'root' }>;

/** What happens to the items a deleted sub profile owned (docs/profiles.md). */
export type OwnedData = { kind: 'keep' } | { kind: 'purge'; authField: string | undefined };

/**
 * Deleting a sub profile: its keys stop working first; with `purge`, the items it owned go next
 * (in every collection of the namespace in the profile's branch); the profile goes last. Every
 * step is idempotent, so a request that failed half-way is simply repeated: the profile is still
 * there to name what is left.
 */
@Injectable()
export class ProfileDeletionService {
  constructor(
    private readonly profiles: ProfileService,
    private readonly repository: ProfileRepository,
    private readonly keys: ApiKeyService,
    private readonly items: ItemBatchesService,
    private readonly profileEvents: ProfileEvents,
  ) {}

  /** Deletes the sub profile; with `purge` also its items, and answers how many went. */
  async deleteSubProfile(
    principal: RootPrincipal,
    accountId: string,
    clientId: string | undefined,
    data: OwnedData,
  ): Promise<{ itemsDeleted: number }> {
    // A bad authField is refused before anything is deleted.
    const ownerField = data.kind === 'purge' ? ownerFieldOf(data.authField) : null;
    // A purge deletes items in every collection: not for a key limited to some.
    if (ownerField !== null && readableBy(principal))
      throw new CollectionNotAllowedError(null, 'write');
    const profile = await this.profiles.getSubProfile(principal, accountId, clientId);
    await this.keys.revokeForSubProfile(principal.subject, profile.id);
    const itemsDeleted =
      ownerField === null
        ? 0
        : await this.items.deleteOwnedEverywhere(
            { ...principal, branch: profile.branch },
            ownerField,
            profile.accountId,
          );
    await this.profileEvents.record(
      profileActorOf(principal),
      { subject: profile.subject, branch: profile.branch, id: profile.id },
      'deleted',
      async () => {
        await this.repository.deleteByKey({
          subject: profile.subject,
          branch: profile.branch,
          clientId: profile.clientId,
          accountId: profile.accountId,
        });
        return null;
      },
    );
    return { itemsDeleted };
  }
}
