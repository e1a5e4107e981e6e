import { Controller, Get, Param } from '@nestjs/common';
import { ApiNotFoundResponse, ApiOkResponse, ApiTags } from '@nestjs/swagger';
import { Auth } from '../auth';
import { ProblemDto } from '../common/errors';
import { ErasureService } from '../lifecycle';
import { ErasureDto } from '../profile';

/** Following the erasures that DELETE /admin/users/{subject}, /admin/teams/{id} and /profile start. */
@ApiTags('admin')
@Controller('admin/erasures')
@Auth('operator')
export class AdminErasuresController {
  constructor(private readonly erasures: ErasureService) {}

  /** An erasure's progress, and its end. */
  @Get(':id')
  @ApiOkResponse({ type: ErasureDto })
  @ApiNotFoundResponse({ type: ProblemDto, description: 'ERASURE_NOT_FOUND' })
  async getErasure(@Param('id') id: string): Promise<ErasureDto> {
    return ErasureDto.from(await this.erasures.get(id));
  }
}
