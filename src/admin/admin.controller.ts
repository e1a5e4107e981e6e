import { Body, Controller, HttpCode, HttpStatus, Param, Post, Put } from '@nestjs/common';
import {
  ApiBadRequestResponse,
  ApiBody,
  ApiConflictResponse,
  ApiNotFoundResponse,
  ApiTags,
} from '@nestjs/swagger';
import { Auth } from '../auth';
import { ProblemDto } from '../common/errors';
import { ProfileDto } from '../profile';
import { AdminService } from './admin.service';
import {
  CreatedTeamDto,
  CreatedUserDto,
  CreateTeamDto,
  CreateUserDto,
  PlanInputDto,
  PlanListDto,
} from './dto/admin.dto';
import { IdempotentWrites } from '../common/idempotency';

/** The deployment operator's API (ADMIN_API_KEY). */
@ApiTags('admin')
@IdempotentWrites()
@Controller('admin')
@Auth('operator')
export class AdminController {
  constructor(private readonly admin: AdminService) {}

  /** Registers a user: its root profile and first root key. */
  @Post('users')
  @HttpCode(HttpStatus.OK)
  @ApiBadRequestResponse({ type: ProblemDto })
  @ApiConflictResponse({ type: ProblemDto, description: 'DUPLICATE_USER: subject or email taken' })
  async createUser(@Body() body: CreateUserDto): Promise<CreatedUserDto> {
    const { profile, apiKey } = await this.admin.createUser(body.email, body.subject);
    return { profile: ProfileDto.from(profile), apiKey };
  }

  /** Registers a team and returns its key. */
  @Post('teams')
  @HttpCode(HttpStatus.OK)
  @ApiBadRequestResponse({ type: ProblemDto })
  async createTeam(@Body() body: CreateTeamDto): Promise<CreatedTeamDto> {
    const { team, apiKey } = await this.admin.createTeam(body.name);
    return { team: { ...team, createdAt: team.createdAt.toISOString() }, apiKey };
  }

  /** Replaces the plans of a user's root profile (the only way plans change). */
  @Put('users/:subject/plans')
  @ApiBody({ type: [PlanInputDto] })
  @ApiBadRequestResponse({ type: ProblemDto })
  @ApiNotFoundResponse({ type: ProblemDto, description: 'PROFILE_NOT_FOUND: no such user' })
  async setUserPlans(
    @Param('subject') subject: string,
    @Body() plans: PlanListDto,
  ): Promise<ProfileDto> {
    return ProfileDto.from(await this.admin.setPlans(subject, plans));
  }
}
