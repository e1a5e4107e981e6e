import { Controller, Get, Inject, Param, Query, Req } from '@nestjs/common';
import { ApiNotFoundResponse, ApiOkResponse, ApiTags } from '@nestjs/swagger';
import type { Request } from 'express';
import { Auth, NeedsNoScope } from '../auth';
import { ProblemDto } from '../common/errors';
import { isObjectIdHex } from '../common/mongo/object-id';
import { ApiKeysetList, nextPageLink, parseKeysetPage } from '../common/pagination/keyset-page';
import { Reply } from '../common/http/reply';
import { APP_CONFIG, type AppConfig } from '../config';
import { ErasureService } from '../lifecycle';
import { ErasureDto } from '../profile';

/** Following the erasures that DELETE /admin/users/{subject}, /admin/teams/{id} and /profile start. */
@ApiTags('admin')
@Controller('admin/erasures')
@NeedsNoScope()
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
  ): Promise<Reply<ErasureDto[]>> {
    const page = parseKeysetPage(raw, {
      limitDefault: this.config.limits.listDefault,
      limitMax: this.config.limits.listMax,
      cursor: { field: 'id', valid: isObjectIdHex, rule: '<erasure id>' },
      order: 'erasures are listed newest first',
    });
    const { erasures, more } = await this.erasures.list(page.limit, page.after);
    const last = erasures.at(-1);
    return Reply.page(
      erasures.map((erasure) => ErasureDto.from(erasure)),
      nextPageLink(req, raw, more && last ? { id: last.id } : undefined),
    );
  }

  /** An erasure's progress, and its end. */
  @Get(':id')
  @ApiOkResponse({ type: ErasureDto })
  @ApiNotFoundResponse({ type: ProblemDto, description: 'ERASURE_NOT_FOUND' })
  async getErasure(@Param('id') id: string): Promise<ErasureDto> {
    return ErasureDto.from(await this.erasures.get(id));
  }
}
