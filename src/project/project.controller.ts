import {
  applyDecorators,
  Body,
  Controller,
  Delete,
  Get,
  HttpCode,
  HttpStatus,
  Inject,
  Param,
  Post,
  Put,
  Req,
} from '@nestjs/common';
import {
  ApiBadRequestResponse,
  ApiNoContentResponse,
  ApiNotFoundResponse,
  ApiOkResponse,
  ApiOperation,
  ApiParam,
  ApiQuery,
  ApiTags,
} from '@nestjs/swagger';
import type { Request } from 'express';
import { Auth, CurrentPrincipal, type Principal, NeedsScope } from '../auth';
import { ProblemDto } from '../common/errors';
import { IfMatchHeader } from '../common/http/conditional';
import type { IfMatch } from '../common/http/etag';
import { parseListQuery } from '../common/http/list-query';
import { ApiConditional } from '../common/http/openapi-conditional';
import { Reply } from '../common/http/reply';
import { APP_CONFIG, type AppConfig } from '../config';
import { CreateProjectDto, ProjectDto, UpdateProjectDto } from './dto/project.dto';
import { walksBackwards } from '../common/pagination/keyset';
import { projectETag } from './project-etag';
import { pageLink } from './project.list-query';
import { PROJECT_SORT_FIELDS } from './project.schema';
import { ProjectService } from './project.service';

const PROJECT_ID_PARAM = ApiParam({
  name: 'projectId',
  description:
    "The project's id. Another owner's or another branch's project, or a malformed id, is a 404.",
  example: '665f1c2a9b1e8a0012345678',
});

const NOT_FOUND = ApiNotFoundResponse({
  type: ProblemDto,
  description:
    'PROJECT_NOT_FOUND: no such project of the caller in the request branch (also for malformed ids)',
});

function cursorQueries(side: 'before' | 'after'): MethodDecorator {
  const relation = side === 'before' ? 'before' : 'after';
  return applyDecorators(
    ...PROJECT_SORT_FIELDS.map((field) =>
      ApiQuery({
        name: `${side}[${field}]`,
        required: false,
        description: `Only projects strictly ${relation} this ${field} in the sort order; must name the sort field (sort=${field}).${
          field === 'name' ? '' : ' RFC 3339 timestamp.'
        }`,
        schema:
          field === 'name'
            ? { type: 'string', example: 'Website relaunch' }
            : { type: 'string', format: 'date-time', example: '2026-05-04T09:30:00.000Z' },
      }),
    ),
    ApiQuery({
      name: `${side}[id]`,
      required: false,
      description: `With ${side}[<sort field>]: the cursor is the pair (value, id) of the ${
        side === 'after' ? 'last' : 'first'
      } item seen, so projects sharing the value are neither skipped nor repeated.`,
      schema: { type: 'string', pattern: '^[0-9a-fA-F]{24}$', example: '665f1c2a9b1e8a0012345678' },
    }),
  );
}

const LIST_QUERIES = applyDecorators(
  ApiQuery({
    name: 'sort',
    required: false,
    enum: PROJECT_SORT_FIELDS,
    description: 'Sort field (default createdAt); ties are broken by id.',
  }),
  ApiQuery({
    name: 'sortOrder',
    required: false,
    enum: ['asc', 'desc'],
    description: 'Default desc.',
  }),
  ApiQuery({
    name: 'limit',
    required: false,
    schema: { type: 'integer', minimum: 1, maximum: 500, default: 50 },
    description: 'Page size, 1 to the configured maximum (default 500).',
  }),
  cursorQueries('after'),
  cursorQueries('before'),
  ...(
    [
      ['name', 'Only projects with exactly this name.'],
      ['tag', 'Only projects that have this tag.'],
      ['filter[name]', 'Same as name=.'],
      ['filter[tag]', 'Same as tag=.'],
    ] as const
  ).map(([name, description]) =>
    ApiQuery({ name, required: false, description, schema: { type: 'string' } }),
  ),
);

@ApiTags('projects')
@Controller('project')
@Auth('root', 'team')
export class ProjectController {
  constructor(
    private readonly projects: ProjectService,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}

  /** Creates a project owned by the caller (a user or a team) in the request branch. */
  @Post()
  @NeedsScope('projects:write')
  @HttpCode(HttpStatus.OK)
  @ApiConditional('create')
  @ApiOkResponse({ type: ProjectDto })
  @ApiBadRequestResponse({ type: ProblemDto, description: 'Invalid name or tags' })
  async createProject(
    @CurrentPrincipal() principal: Principal,
    @Body() body: CreateProjectDto,
  ): Promise<Reply<ProjectDto>> {
    const project = await this.projects.create(principal, {
      name: body.name,
      tags: body.tags ?? [],
    });
    return Reply.written(projectETag(project), ProjectDto.from(project));
  }

  /** Lists the caller's projects in the request branch, one page at a time. */
  @Get()
  @NeedsScope('projects:read')
  @ApiOperation({
    description: [
      'Keyset pagination: follow the `Link: <...>; rel="next"` header, or pass the last item\'s sort value',
      'and id as `after[<sort field>]` and `after[id]`. `before[...]` alone returns the page right before',
      'the cursor (still in the requested order) with a `rel="prev"` link. Ties are broken by id.',
      '',
      'Example: `GET /project?sort=name&sortOrder=asc&limit=100&tag=web`, then',
      '`GET /project?sort=name&sortOrder=asc&limit=100&tag=web&after[name]=Billing&after[id]=665f1c2a9b1e8a0012345678`.',
    ].join('\n'),
  })
  @LIST_QUERIES
  @ApiOkResponse({
    type: [ProjectDto],
    description: 'One page of projects',
    headers: {
      Link: {
        description:
          'Present when another page exists: `</project?...&after[createdAt]=...&after[id]=...>; rel="next"` (rel="prev" when walking backwards with before[] alone); the other query parameters are kept.',
        schema: { type: 'string' },
      },
    },
  })
  @ApiBadRequestResponse({
    type: ProblemDto,
    description:
      'Unknown parameter or filter (the problem lists the allowed ones), bad sort, cursor or limit',
  })
  async listProjects(
    @CurrentPrincipal() principal: Principal,
    @Req() req: Request,
  ): Promise<Reply<ProjectDto[]>> {
    const query = parseListQuery(req.query, {
      limitDefault: this.config.limits.listDefault,
      limitMax: this.config.limits.listMax,
    });
    const { spec, page } = await this.projects.list(principal, query);
    const items = page.items.map((p) => ProjectDto.from(p));
    const edge = walksBackwards(spec) ? items[0] : items[items.length - 1];
    if (!page.hasMore || !edge) return Reply.of(items);
    const path = (req.originalUrl ?? req.url).split('?')[0] ?? '/project';
    return Reply.page(items, pageLink(path, req.query, spec, edge));
  }

  /** Reads one of the caller's projects. */
  @Get(':projectId')
  @NeedsScope('projects:read')
  @PROJECT_ID_PARAM
  @ApiConditional('read')
  @ApiOkResponse({ type: ProjectDto })
  @NOT_FOUND
  async getProjectById(
    @CurrentPrincipal() principal: Principal,
    @Param('projectId') projectId: string,
  ): Promise<Reply<ProjectDto>> {
    const project = await this.projects.get(principal, projectId);
    return Reply.read(projectETag(project), () => ProjectDto.from(project));
  }

  /** Changes the name and/or the tags of one of the caller's projects (at least one of them). */
  @Put(':projectId')
  @NeedsScope('projects:write')
  @PROJECT_ID_PARAM
  @ApiConditional('write')
  @ApiOkResponse({ type: ProjectDto })
  @ApiBadRequestResponse({
    type: ProblemDto,
    description: 'Invalid name or tags, or neither given',
  })
  @NOT_FOUND
  async updateProject(
    @CurrentPrincipal() principal: Principal,
    @Param('projectId') projectId: string,
    @Body() body: UpdateProjectDto,
    @IfMatchHeader() ifMatch: IfMatch,
  ): Promise<Reply<ProjectDto>> {
    const changes = {
      ...(body.name !== undefined ? { name: body.name } : {}),
      ...(body.tags !== undefined ? { tags: body.tags } : {}),
    };
    const project = await this.projects.update(principal, projectId, changes, ifMatch);
    return Reply.written(projectETag(project), ProjectDto.from(project));
  }

  /** Deletes one of the caller's projects. */
  @Delete(':projectId')
  @NeedsScope('projects:write')
  @HttpCode(HttpStatus.NO_CONTENT)
  @PROJECT_ID_PARAM
  @ApiConditional('write')
  @ApiNoContentResponse({ description: 'Deleted' })
  @NOT_FOUND
  async deleteProject(
    @CurrentPrincipal() principal: Principal,
    @Param('projectId') projectId: string,
    @IfMatchHeader() ifMatch: IfMatch,
  ): Promise<void> {
    await this.projects.remove(principal, projectId, ifMatch);
  }
}
