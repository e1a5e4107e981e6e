import { Body, Controller, Delete, Get, HttpCode, HttpStatus, Param, Res } from '@nestjs/common';
import {
  ApiAcceptedResponse,
  ApiBadRequestResponse,
  ApiNotFoundResponse,
  ApiOkResponse,
  ApiTags,
} from '@nestjs/swagger';
import type { Response } from 'express';
import { Auth, CurrentPrincipal, type Principal } from '../auth';
import { ForbiddenError, ProblemDto, ValidationFailedError } from '../common/errors';
import { ConfirmErasureDto, ErasureDto } from './dto/erasure.dto';
import { ErasureService, type Erasure } from './erasure.service';
import { IdempotentWrites } from '../common/idempotency';

type RootPrincipal = Extract<Principal, { kind: 'root' }>;

/** 202 with the erasure, and where the operator follows it. */
function accepted(res: Response, erasure: Erasure): ErasureDto {
  res.setHeader('Location', `/admin/erasures/${erasure.id}`);
  return ErasureDto.from(erasure);
}

const ACCEPTED = {
  type: ErasureDto,
  description:
    'The erasure: its keys are revoked already, the rest runs in the background (`Location` names it). A repeated request answers the same erasure.',
  headers: { Location: { description: '/admin/erasures/{id}', schema: { type: 'string' } } },
};

/** Erasing accounts and teams (operator), and following an erasure. */
@ApiTags('admin')
@IdempotentWrites()
@Controller('admin')
@Auth('operator')
export class ErasureController {
  constructor(private readonly erasures: ErasureService) {}

  /**
   * Erases a user: root and sub profiles, every key, its projects, every collection of its
   * namespace in every branch, and its team memberships. Idempotent; resumed after a crash.
   */
  @Delete('users/:subject')
  @HttpCode(HttpStatus.ACCEPTED)
  @ApiAcceptedResponse(ACCEPTED)
  @ApiNotFoundResponse({ type: ProblemDto, description: 'PROFILE_NOT_FOUND: no such user' })
  async eraseUser(
    @Param('subject') subject: string,
    @Res({ passthrough: true }) res: Response,
  ): Promise<ErasureDto> {
    return accepted(res, await this.erasures.start('user', subject));
  }

  /** Erases a team like an account: its keys, memberships, projects and collections, then the team. */
  @Delete('teams/:id')
  @HttpCode(HttpStatus.ACCEPTED)
  @ApiAcceptedResponse(ACCEPTED)
  @ApiNotFoundResponse({ type: ProblemDto, description: 'TEAM_NOT_FOUND: no such team' })
  async eraseTeam(
    @Param('id') id: string,
    @Res({ passthrough: true }) res: Response,
  ): Promise<ErasureDto> {
    return accepted(res, await this.erasures.start('team', id));
  }

  /** An erasure's progress, and its end. */
  @Get('erasures/:id')
  @ApiOkResponse({ type: ErasureDto })
  @ApiNotFoundResponse({ type: ProblemDto, description: 'ERASURE_NOT_FOUND' })
  async getErasure(@Param('id') id: string): Promise<ErasureDto> {
    return ErasureDto.from(await this.erasures.get(id));
  }
}

/** A user erasing its own account. */
@ApiTags('profile')
@IdempotentWrites()
@Controller('profile')
export class AccountErasureController {
  constructor(private readonly erasures: ErasureService) {}

  /**
   * Erases your whole account, as the operator's DELETE /admin/users/{subject} does: every key
   * stops working before the answer. The body must name your subject. Root keys not bound to a
   * branch only (an account spans every branch).
   */
  @Delete()
  @Auth('root')
  @HttpCode(HttpStatus.ACCEPTED)
  @ApiAcceptedResponse(ACCEPTED)
  @ApiBadRequestResponse({ type: ProblemDto, description: '`confirm` is not your subject' })
  async eraseOwnAccount(
    @CurrentPrincipal() principal: RootPrincipal,
    @Body() body: ConfirmErasureDto,
    @Res({ passthrough: true }) res: Response,
  ): Promise<ErasureDto> {
    if (principal.boundBranch !== null)
      throw new ForbiddenError(
        `The API key is bound to branch '${principal.boundBranch}'; erasing the account needs an unbound root key.`,
      );
    if (body.confirm !== principal.subject)
      throw new ValidationFailedError([
        { field: 'confirm', message: 'must be your subject, to confirm the erasure' },
      ]);
    return accepted(res, await this.erasures.start('user', principal.subject));
  }
}
