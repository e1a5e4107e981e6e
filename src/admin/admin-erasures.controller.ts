import { Controller, Get, Inject, Param, Query, Req, Res } from '@nestjs/common';
import { ApiNotFoundResponse, ApiOkResponse, ApiTags } from '@nestjs/swagger';
import type { Request, Response } from 'express';
import { Auth } from '../auth';
import { ProblemDto } from '../common/errors';
import { isObjectIdHex } from '../common/mongo/object-id';
import { ApiKeysetList, linkNextPage, parseKeysetPage } from '../common/pagination/keyset-page';
import { APP_CONFIG, type AppConfig } from '../config';
import { ErasureService } from '../lifecycle';
import { ErasureDto } from '../profile';

/** Following the erasures that DELETE /admin/users/{subject}, /admin/teams/{id} and /profile start. */
@ApiTags('admin')
@Controller('admin/erasures')
@Auth('operator')
export class AdminErasuresController {
  constructor(
    private readonly erasures: ErasureService,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}

  /**
   * Every erasure, running or done, newest first; `Link: <…>; rel="next"` while more follow. A
   * finished erasure names nobody: its target is gone with the account.
   */
  @Get()
  @ApiKeysetList(ErasureDto, 'id', '^[0-9a-f]{24}$', 'the erasures requested before that one')
  async listErasures(
    @Query() raw: Record<string, unknown>,
    @Req() req: Request,
    @Res({ passthrough: true }) res: Response,
  ): Promise<ErasureDto[]> {
    const page = parseKeysetPage(raw, {
      limitDefault: this.config.limits.listDefault,
      limitMax: this.config.limits.listMax,
      cursor: { field: 'id', valid: isObjectIdHex, rule: '<erasure id>' },
      order: 'erasures are listed newest first',
    });
    const { erasures, more } = await this.erasures.list(page.limit, page.after);
    const last = erasures.at(-1);
    linkNextPage(req, res, raw, more && last ? { id: last.id } : undefined);
    return erasures.map((erasure) => ErasureDto.from(erasure));
  }

  /** An erasure's progress, and its end. */
  @Get(':id')
  @ApiOkResponse({ type: ErasureDto })
  @ApiNotFoundResponse({ type: ProblemDto, description: 'ERASURE_NOT_FOUND' })
  async getErasure(@Param('id') id: string): Promise<ErasureDto> {
    return ErasureDto.from(await this.erasures.get(id));
  }
}
