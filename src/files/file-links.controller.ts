import { Controller, Get, Param, Req, Res } from '@nestjs/common';
import {
  ApiExtension,
  ApiForbiddenResponse,
  ApiGoneResponse,
  ApiTags,
  ApiTooManyRequestsResponse,
} from '@nestjs/swagger';
import { RATE_LIMITED_BY_ADDRESS } from '../common/http/openapi';
import type { Request, Response } from 'express';
import { Public } from '../auth';
import { ProblemDto } from '../common/errors';
import { ApiFileContent } from './dto/file.openapi';
import { FileContents } from './file-contents';
import { sendFile } from './file-download';
import { FilesService } from './files.service';

/** Signed links (POST /files/{id}/links): downloads without a key, for browsers. */
@ApiTags('files')
@Controller('file-links')
@Public()
export class FileLinksController {
  constructor(
    private readonly files: FilesService,
    private readonly contents: FileContents,
  ) {}

  /**
   * The file a link grants, answered like GET /files/{id}/content (the same types inline, every
   * other as an attachment; nosniff and the sandbox CSP). 404 once the stored file it was made
   * for is deleted or replaced, whatever has its id since.
   */
  @Get(':token')
  // No key: the rate limit counts the client's address.
  @ApiExtension(RATE_LIMITED_BY_ADDRESS, true)
  @ApiFileContent()
  @ApiForbiddenResponse({
    type: ProblemDto,
    description:
      'FILE_LINK_INVALID: not a link this service signed, or one made before links named the stored file',
  })
  @ApiGoneResponse({ type: ProblemDto, description: 'FILE_LINK_EXPIRED' })
  @ApiTooManyRequestsResponse({
    type: ProblemDto,
    description: 'RATE_LIMITED: too many requests without a key from this address',
  })
  async downloadByLink(
    @Param('token') token: string,
    @Req() req: Request,
    @Res() res: Response,
  ): Promise<void> {
    await sendFile(req, res, await this.files.byLink(token), this.contents);
  }
}
