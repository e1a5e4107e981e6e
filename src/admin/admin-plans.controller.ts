import { Body, Controller, Delete, Get, HttpCode, HttpStatus, Param, Put } from '@nestjs/common';
import {
  ApiBadRequestResponse,
  ApiConflictResponse,
  ApiNoContentResponse,
  ApiNotFoundResponse,
  ApiOkResponse,
  ApiParam,
  ApiTags,
} from '@nestjs/swagger';
import { Auth, NeedsNoScope } from '../auth';
import { ProblemDto } from '../common/errors';
import { IfMatchHeader } from '../common/http/conditional';
import type { IfMatch } from '../common/http/etag';
import { ApiConditional } from '../common/http/openapi-conditional';
import { Reply } from '../common/http/reply';
import { PLAN_NAME_PATTERN, PlanCatalogue, planTag, type Plan } from '../plans';
import { CatalogPlanDto, PutPlanDto } from './dto/plans.dto';
import { PlanNamePipe } from './plan-name.pipe';

const PLAN_NAME_PARAM = ApiParam({
  name: 'planName',
  description: "The plan's name: 1-64 of A-Z a-z 0-9 . _ -, starting with a letter or digit",
  schema: { type: 'string', pattern: PLAN_NAME_PATTERN.source },
  example: 'pro',
});

const NO_SUCH_PLAN = ApiNotFoundResponse({
  type: ProblemDto,
  description: 'PLAN_NOT_FOUND: no plan of that name',
});

const BAD_NAME =
  'VALIDATION_FAILED: a plan name is 1-64 of A-Z a-z 0-9 . _ -, starting with a letter or digit';

/**
 * The plan catalogue (docs/plans.md): plans by name with the limits they set. Users and teams
 * hold plans by name (PUT /admin/users/{subject}/plans, PUT /admin/teams/{id}/plans). The ETag of
 * a plan is `"plan-<version>"`; If-Match on PUT and DELETE is optional, as on every write of the
 * service, and holds across instances on MongoDB (docs/requests.md, "Conditional requests").
 */
@ApiTags('admin')
@Controller('admin/plans')
@NeedsNoScope()
@Auth('operator')
export class AdminPlansController {
  constructor(private readonly catalogue: PlanCatalogue) {}

  /** Every plan, by name (the catalogue is small: no pages). */
  @Get()
  @ApiOkResponse({ type: [CatalogPlanDto] })
  async listPlans(): Promise<CatalogPlanDto[]> {
    return (await this.catalogue.list()).map((plan) => CatalogPlanDto.from(plan));
  }

  /** A plan, with its ETag. */
  @Get(':planName')
  @PLAN_NAME_PARAM
  @ApiOkResponse({ type: CatalogPlanDto })
  @ApiConditional('read')
  @ApiBadRequestResponse({ type: ProblemDto, description: BAD_NAME })
  @NO_SUCH_PLAN
  async getPlan(@Param('planName', PlanNamePipe) name: string): Promise<Reply<CatalogPlanDto>> {
    const plan = await this.catalogue.get(name);
    return Reply.read(tagOf(plan), () => CatalogPlanDto.from(plan));
  }

  /**
   * Creates the plan, or replaces its limits and metadata (the next `version`). Users and teams
   * holding it get the new limits on this instance at once, on the others within PLAN_CACHE_MS.
   */
  @Put(':planName')
  @PLAN_NAME_PARAM
  @ApiOkResponse({ type: CatalogPlanDto })
  @ApiConditional('write')
  @ApiBadRequestResponse({
    type: ProblemDto,
    description: `${BAD_NAME}; VALIDATION_FAILED: a limit unknown, not an integer or out of its bounds; metadata breaking the rules of profile settings`,
  })
  async putPlan(
    @Param('planName', PlanNamePipe) name: string,
    @Body() body: PutPlanDto,
    @IfMatchHeader() ifMatch: IfMatch,
  ): Promise<Reply<CatalogPlanDto>> {
    const limits = Object.fromEntries(
      Object.entries(body.limits).filter(([, value]) => value !== undefined),
    );
    const { plan } = await this.catalogue.put(
      name,
      { limits, metadata: body.metadata ?? {} },
      ifMatch,
    );
    return Reply.written(tagOf(plan), CatalogPlanDto.from(plan));
  }

  /**
   * Deletes the plan, unless a user or a team holds it: has an entry naming it whose `until` has
   * not passed (409 PLAN_IN_USE with how many `profiles` and `teams`).
   */
  @Delete(':planName')
  @PLAN_NAME_PARAM
  @HttpCode(HttpStatus.NO_CONTENT)
  @ApiNoContentResponse({ description: 'The plan is gone' })
  @ApiConditional('write')
  @ApiBadRequestResponse({ type: ProblemDto, description: BAD_NAME })
  @ApiConflictResponse({
    type: ProblemDto,
    description: 'PLAN_IN_USE: users or teams hold the plan (`profiles`, `teams`: how many)',
  })
  @NO_SUCH_PLAN
  async deletePlan(
    @Param('planName', PlanNamePipe) name: string,
    @IfMatchHeader() ifMatch: IfMatch,
  ): Promise<void> {
    await this.catalogue.remove(name, ifMatch);
  }
}

function tagOf(plan: Plan): string {
  return planTag(plan) as string;
}
