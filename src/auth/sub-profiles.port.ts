/**
 * What key management needs to know of sub profiles: whether one exists, to mint a sub key for
 * it. Auth declares the port and the composition root (AppModule) plugs in the module that owns
 * profiles, so auth depends on no feature module.
 */
export interface SubProfileLookup {
  findSub(key: {
    subject: string;
    branch: string;
    clientId: string;
    accountId: string;
  }): Promise<{ id: string; clientId: string; accountId: string } | null>;
}

export const SUB_PROFILE_LOOKUP = Symbol('SubProfileLookup');
