/** Who is calling, resolved from the API key by ApiKeyGuard; `branch` is the request branch. */
export type Principal =
  | { kind: 'root'; keyId: string; subject: string; branch: string }
  | {
      kind: 'sub';
      keyId: string;
      subject: string;
      clientId: string;
      accountId: string;
      profileId: string;
      branch: string;
    }
  | { kind: 'team'; keyId: string; teamId: string; branch: string }
  | { kind: 'operator'; branch: string };

export type PrincipalKind = Principal['kind'];
export type CustomerPrincipal = Exclude<Principal, { kind: 'operator' }>;

/** The owner of a namespace: a root user's subject (for root and sub callers) or a team id. */
export function tenantOf(principal: CustomerPrincipal): string {
  switch (principal.kind) {
    case 'root':
    case 'sub':
      return principal.subject;
    case 'team':
      return principal.teamId;
  }
}

/** The value stamped into a data item's owner field: subject, accountId or teamId. */
export function ownerValueOf(principal: CustomerPrincipal): string {
  switch (principal.kind) {
    case 'root':
      return principal.subject;
    case 'sub':
      return principal.accountId;
    case 'team':
      return principal.teamId;
  }
}
