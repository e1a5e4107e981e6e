import { Body, Controller, Delete, Get, HttpCode, HttpStatus, Param, Post } from '@nestjs/common';
import {
  ApiBadRequestResponse,
  ApiBody,
  ApiForbiddenResponse,
  ApiNotFoundResponse,
  ApiOkResponse,
  ApiTags,
} from '@nestjs/swagger';
import { ProblemDto } from '../common/errors';
import { ApiKeyService, callerLimitsOf } from './api-key.service';
import { Auth, CurrentPrincipal, NeedsScope } from './auth.decorators';
import {
  ApiKeyDto,
  ApiKeyLimitProblems,
  CreateApiKeyDto,
  IssuedApiKeyDto,
  RotateApiKeyDto,
  RotatedApiKeyDto,
} from './dto/api-key.dto';
import type { KeyManager } from './key-scope';
import type { Principal } from './principal';

type RootPrincipal = Extract<Principal, { kind: 'root' }>;

/** The caller as a manager of the user's keys: confined to its branch when its key is bound. */
function managerOf(principal: RootPrincipal): KeyManager {
  return { subject: principal.subject, boundBranch: principal.boundBranch };
}

@ApiTags('api-keys')
@Controller('api-keys')
@NeedsScope('keys:manage')
@Auth('root')
export class ApiKeyController {
  constructor(private readonly keys: ApiKeyService) {}

  /**
   * Lists the user's API keys (root and sub keys); never their secrets. A key bound to a branch
   * lists only the keys bound to that branch.
   */
  @Get()
  async listApiKeys(@CurrentPrincipal() principal: RootPrincipal): Promise<ApiKeyDto[]> {
    return (await this.keys.list(managerOf(principal))).map((k) => ApiKeyDto.from(k));
  }

  /**
   * Creates a root key, or with clientId + accountId a key acting as that sub profile. The secret
   * is shown once. A key bound to a branch creates only keys bound to that branch (`branch`
   * defaults to it; another branch is a 403 BRANCH_MISMATCH). `scopes`, `collections` and
   * `allowedIps` limit the new key (absent or null: no limit); a key never mints a key with more
   * than it has (403 SCOPE_ESCALATION). With `"kind": "publishable"`, `collections` (a list of
   * names) and `allowedOrigins`: a read-only key for web pages, which reads only those collections
   * through their `public.read` rule and answers CORS only for those origins (docs/keys.md, "Publishable
   * keys").
   */
  @Post()
  @HttpCode(HttpStatus.OK)
  // Every member is optional, and no body at all creates a root key.
  @ApiBody({ type: CreateApiKeyDto, required: false })
  @ApiKeyLimitProblems()
  @ApiNotFoundResponse({
    type: ProblemDto,
    description: 'PROFILE_NOT_FOUND: no such sub profile in the branch',
  })
  async createApiKey(
    @CurrentPrincipal() principal: RootPrincipal,
    @Body() body: CreateApiKeyDto,
  ): Promise<IssuedApiKeyDto> {
    const issued = await this.keys.createForRoot(
      managerOf(principal),
      principal.branch,
      body,
      callerLimitsOf(principal),
    );
    return { key: ApiKeyDto.from(issued.key), apiKey: issued.apiKey };
  }

  /**
   * Issues a new secret for a key of the user, with the same kind, rights, name, branch and
   * expiry (shown once), and ends the old secret after `graceSeconds` (default 0: at once; never
   * beyond its own expiry): 401 after it. Through another instance the old secret may work up to
   * API_KEY_CACHE_MS longer, as after a revocation. The callers that may revoke the key may rotate
   * it; a key with limits only keys within its own (403 SCOPE_ESCALATION).
   */
  @Post(':id/rotate')
  @HttpCode(HttpStatus.OK)
  @ApiBody({ type: RotateApiKeyDto, required: false })
  @ApiOkResponse({ type: RotatedApiKeyDto })
  @ApiBadRequestResponse({ type: ProblemDto })
  @ApiForbiddenResponse({
    type: ProblemDto,
    description:
      'SCOPE_ESCALATION: the key has rights the calling key lacks, or outlives it; FORBIDDEN: a key of another branch',
  })
  @ApiNotFoundResponse({
    type: ProblemDto,
    description: 'API_KEY_NOT_FOUND: no such key of the user',
  })
  async rotateApiKey(
    @CurrentPrincipal() principal: RootPrincipal,
    @Param('id') id: string,
    @Body() body: RotateApiKeyDto,
  ): Promise<RotatedApiKeyDto> {
    const rotated = await this.keys.rotate(
      managerOf(principal),
      id,
      body,
      callerLimitsOf(principal),
    );
    return RotatedApiKeyDto.of(rotated);
  }

  /**
   * Revokes a key of the user at once. A key bound to a branch revokes only keys bound to that
   * branch (403 for the user's other keys).
   */
  @Delete(':id')
  @HttpCode(HttpStatus.NO_CONTENT)
  @ApiNotFoundResponse({
    type: ProblemDto,
    description: 'API_KEY_NOT_FOUND: no such key of the user',
  })
  async deleteApiKey(
    @CurrentPrincipal() principal: RootPrincipal,
    @Param('id') id: string,
  ): Promise<void> {
    await this.keys.revoke(managerOf(principal), id);
  }
}
