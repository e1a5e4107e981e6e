import type { Tenant } from '../common/tenancy/namespace';
import type { ProfileService } from '../profile';
import type { TeamService } from '../team';

/** Whether the user or team exists. */
export function tenantExists(
  tenant: Tenant,
  profiles: Pick<ProfileService, 'userExists'>,
  teams: Pick<TeamService, 'exists'>,
): Promise<boolean> {
  switch (tenant.kind) {
    case 'user':
      return profiles.userExists(tenant.id);
    case 'team':
      return teams.exists(tenant.id);
  }
}
