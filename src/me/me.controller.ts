import { Controller, Get } from '@nestjs/common';
import { ApiOkResponse, ApiTags } from '@nestjs/swagger';
import { Auth, CurrentPrincipal, type Principal } from '../auth';
import { MeDto } from './me.dto';
import { MeService } from './me.service';

/** Who am I: the principal of the request's key, its branch, the key and the quotas that apply. */
@ApiTags('me')
@Controller('me')
export class MeController {
  constructor(private readonly me: MeService) {}

  /** Every kind of key may ask; nothing here is secret to the key that asks. */
  @Get()
  @Auth('root', 'sub', 'team', 'operator')
  @ApiOkResponse({
    type: MeDto,
    example: {
      kind: 'sub',
      subject: 'auth0|ada',
      clientId: 'web-app',
      accountId: 'acct-42',
      profileId: '665f1c2a9b1e8a0012345679',
      branch: '',
      boundBranch: '',
      key: { id: '665f1c2a9b1e8a0012345678', prefix: 'pds_a1b2c3', name: '', expiresAt: null },
      quota: {
        collections: { used: 3, limit: 100 },
        indexesPerCollection: 20,
        requestsPerWindow: 1000,
        windowMs: 60000,
      },
    },
  })
  async getMe(@CurrentPrincipal() principal: Principal): Promise<MeDto> {
    return this.me.describe(principal);
  }
}
