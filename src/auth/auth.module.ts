import { Module, type DynamicModule, type ModuleMetadata, type Type } from '@nestjs/common';
import { MongooseModule } from '@nestjs/mongoose';
import { ApiKeyController } from './api-key.controller';
import { ApiKeyGuard } from './api-key.guard';
import { ApiKeyRepository } from './api-key.repository';
import { ApiKeyDocument, ApiKeySchema } from './api-key.schema';
import { ApiKeyService } from './api-key.service';
import { AuthFailureLimiter } from './auth-failure.limiter';
import { AuthFailureRepository } from './auth-failure.repository';
import { AuthFailureDocument, AuthFailureSchema } from './auth-failure.schema';
import { KeyLastUse } from './key-last-use';
import { OverBudgetKeyLookups } from './over-budget-lookups';
import { PrincipalRights } from './principal-rights';
import { SUB_PROFILE_LOOKUP, type SubProfileLookup } from './sub-profiles.port';
import { TEAM_MEMBERSHIP_LOOKUP, type TeamMembershipLookup } from './team-memberships.port';
import { TokenVerifier } from './oidc/token-verifier';
import { TOKEN_PRINCIPALS, type TokenPrincipals } from './token-principals.port';

export interface AuthModuleOptions {
  /** The modules that provide `subProfiles`, `teamMemberships` and `tokenPrincipals`. */
  imports: NonNullable<ModuleMetadata['imports']>;
  /** The provider that answers the sub-profile port (the profile module's service). */
  subProfiles: Type<SubProfileLookup>;
  /** The provider that answers the team-membership port (the team module's service). */
  teamMemberships: Type<TeamMembershipLookup>;
  /** The provider that resolves access tokens to principals (the identity module's). */
  tokenPrincipals: Type<TokenPrincipals>;
}

/**
 * API keys and access tokens, the global guard and key management. Global: every feature module's routes are
 * guarded by it, and the operator API mints keys through ApiKeyService.
 */
@Module({})
export class AuthModule {
  static register(options: AuthModuleOptions): DynamicModule {
    return {
      module: AuthModule,
      global: true,
      imports: [
        MongooseModule.forFeature([
          { name: ApiKeyDocument.name, schema: ApiKeySchema },
          { name: AuthFailureDocument.name, schema: AuthFailureSchema },
        ]),
        ...options.imports,
      ],
      controllers: [ApiKeyController],
      providers: [
        ApiKeyRepository,
        KeyLastUse,
        OverBudgetKeyLookups,
        ApiKeyService,
        AuthFailureRepository,
        AuthFailureLimiter,
        TokenVerifier,
        ApiKeyGuard,
        PrincipalRights,
        { provide: SUB_PROFILE_LOOKUP, useExisting: options.subProfiles },
        { provide: TEAM_MEMBERSHIP_LOOKUP, useExisting: options.teamMemberships },
        { provide: TOKEN_PRINCIPALS, useExisting: options.tokenPrincipals },
      ],
      exports: [ApiKeyService, ApiKeyGuard, PrincipalRights],
    };
  }
}
