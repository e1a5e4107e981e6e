import {
  Body,
  Controller,
  HttpCode,
  HttpStatus,
  Param,
  ParseArrayPipe,
  Post,
  Put,
} from '@nestjs/common';
import {
  ApiBadRequestResponse,
  ApiBody,
  ApiConflictResponse,
  ApiNotFoundResponse,
  ApiTags,
} from '@nestjs/swagger';
import { Auth } from '../auth';
import { ProblemDto, ValidationFailedError } from '../common/errors';
import { ProfileDto } from '../profile/dto/profile.dto';
import { PlanMetadataPipe } from '../profile/profile-body.pipe';
import { AdminService } from './admin.service';
import {
  CreatedTeamDto,
  CreatedUserDto,
  CreateTeamDto,
  CreateUserDto,
  PlanInputDto,
} from './dto/admin.dto';

const MAX_PLANS = 50;

/** The deployment operator's API (ADMIN_API_KEY). */
@ApiTags('admin')
@Controller('admin')
@Auth('operator')
export class AdminController {
  constructor(private readonly admin: AdminService) {}

  /** Registers a user: its root profile and first root key. */
  @Post('users')
  @HttpCode(HttpStatus.OK)
  @ApiBadRequestResponse({ type: ProblemDto })
  @ApiConflictResponse({ type: ProblemDto, description: 'Subject or email taken' })
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
  @ApiNotFoundResponse({ type: ProblemDto, description: 'No such user' })
  async setUserPlans(
    @Param('subject') subject: string,
    @Body(
      PlanMetadataPipe,
      new ParseArrayPipe({ items: PlanInputDto, whitelist: true, forbidNonWhitelisted: true }),
    )
    plans: PlanInputDto[],
  ): Promise<ProfileDto> {
    if (plans.length > MAX_PLANS) {
      throw new ValidationFailedError([{ field: '', message: `at most ${MAX_PLANS} plans` }]);
    }
    const invalid = plans.flatMap((p, i) =>
      p.until < p.since ? [{ field: `${i}.until`, message: 'until must not be before since' }] : [],
    );
    if (invalid.length > 0) throw new ValidationFailedError(invalid);
    const profile = await this.admin.setPlans(
      subject,
      plans.map((p) => ({
        planName: p.planName,
        since: p.since,
        until: p.until,
        metadata: p.metadata ?? {},
      })),
    );
    return ProfileDto.from(profile);
  }
}
