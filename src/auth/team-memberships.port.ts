/**
 * What the guard needs to know of teams: the role a user holds in a team, to let its root key act
 * for the team (X-Team). Auth declares the port and the composition root (AppModule) plugs in
 * the module that owns teams, so auth depends on no feature module.
 */
export interface TeamMembershipLookup {
  roleOf(teamId: string, subject: string): Promise<'admin' | 'member' | null>;
  /** Which of these memberships exist, in one query (the rights check of open streams). */
  existingAmong(
    pairs: { teamId: string; subject: string }[],
  ): Promise<{ teamId: string; subject: string }[]>;
}

export const TEAM_MEMBERSHIP_LOOKUP = Symbol('TeamMembershipLookup');

/** Team ids are UUIDs (POST /admin/teams makes them): what X-Team and team routes accept. */
export const TEAM_ID_PATTERN = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
