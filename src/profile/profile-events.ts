import { Injectable, type OnModuleInit } from '@nestjs/common';
import { Types } from 'mongoose';
import { EventsService, type ChangeScope } from '../events';
import type { EventActor } from '../events/event.schema';
import { ProfileDto } from './dto/profile.dto';
import { ProfileRepository } from './profile.repository';
import type { ProfilePrincipal } from './profile-target';
import type { Profile } from './profile.types';

/** Who changes a profile: a root or sub key, or the operator (plans). */
export function profileActorOf(principal: ProfilePrincipal | 'operator'): EventActor {
  if (principal === 'operator') return { kind: 'operator', id: '' };
  return principal.kind === 'root'
    ? { kind: 'root', id: principal.subject }
    : { kind: 'sub', id: principal.accountId };
}

/**
 * The change feed's view of profiles: a profile's events go to its user's namespace in the
 * profile's branch (the root profile's: the standard branch), keyed and owned by the profile id
 * — a sub key sees the events of its own profile.
 */
@Injectable()
export class ProfileEvents implements OnModuleInit {
  constructor(
    private readonly events: EventsService,
    private readonly profiles: ProfileRepository,
  ) {}

  onModuleInit(): void {
    this.events.registerLookup('profile', async (_scope, change) => {
      if (!Types.ObjectId.isValid(change.key)) return null;
      const profile = await this.profiles.findById(change.key);
      return profile ? { owner: profile.id, data: { ...ProfileDto.from(profile) } } : null;
    });
  }

  get enabled(): boolean {
    return this.events.enabled;
  }

  /** A write of the profile `id` (of `subject`, in `branch`) that answers it as written. */
  record<T extends Profile | null>(
    actor: EventActor,
    where: { subject: string; branch: string; id: string },
    type: 'created' | 'updated' | 'deleted',
    write: () => Promise<T>,
  ): Promise<T> {
    const scope: ChangeScope = {
      tenant: { kind: 'user', id: where.subject },
      branch: where.branch,
      actor,
    };
    return this.events.record(
      scope,
      [{ resource: 'profile', type, key: where.id }],
      write,
      (profile) =>
        type !== 'deleted' && profile === null
          ? []
          : [
              {
                resource: 'profile',
                type,
                key: where.id,
                owner: where.id,
                data:
                  profile === null || type === 'deleted' ? null : { ...ProfileDto.from(profile) },
              },
            ],
    );
  }
}
