import { Body, Controller, Delete, Get, HttpCode, HttpStatus, Param, Post } from '@nestjs/common';
import { ApiBadRequestResponse, ApiNotFoundResponse, ApiTags } from '@nestjs/swagger';
import { ProblemDto } from '../common/errors';
import { ApiKeyService } from './api-key.service';
import { Auth, CurrentPrincipal } from './auth.decorators';
import { ApiKeyDto, CreateApiKeyDto, IssuedApiKeyDto } from './dto/api-key.dto';
import type { Principal } from './principal';

type RootPrincipal = Extract<Principal, { kind: 'root' }>;

@ApiTags('api-keys')
@Controller('api-keys')
@Auth('root')
export class ApiKeyController {
  constructor(private readonly keys: ApiKeyService) {}

  /** Lists the user's API keys (root and sub keys); never their secrets. */
  @Get()
  async listApiKeys(@CurrentPrincipal() principal: RootPrincipal): Promise<ApiKeyDto[]> {
    return (await this.keys.list(principal.subject)).map((k) => ApiKeyDto.from(k));
  }

  /** Creates a root key, or with clientId + accountId a key acting as that sub profile. The secret is shown once. */
  @Post()
  @HttpCode(HttpStatus.OK)
  @ApiBadRequestResponse({ type: ProblemDto })
  @ApiNotFoundResponse({ type: ProblemDto, description: 'No such sub profile' })
  async createApiKey(
    @CurrentPrincipal() principal: RootPrincipal,
    @Body() body: CreateApiKeyDto,
  ): Promise<IssuedApiKeyDto> {
    const issued = await this.keys.createForRoot(principal.subject, principal.branch, body);
    return { key: ApiKeyDto.from(issued.key), apiKey: issued.apiKey };
  }

  /** Revokes a key of the user at once. */
  @Delete(':id')
  @HttpCode(HttpStatus.NO_CONTENT)
  @ApiNotFoundResponse({ type: ProblemDto })
  async deleteApiKey(
    @CurrentPrincipal() principal: RootPrincipal,
    @Param('id') id: string,
  ): Promise<void> {
    await this.keys.revoke(principal.subject, id);
  }
}
