import { Injectable, type OnModuleInit } from '@nestjs/common';
import { Types } from 'mongoose';
import { tenantOf, type Principal } from '../auth';
import type { Tenant } from '../common/tenancy/namespace';
import {
  ForbiddenError,
  PreconditionFailedError,
  ValidationFailedError,
  type DomainError,
} from '../common/errors';
import { NO_PRECONDITION, revisionsOf, type IfMatch } from '../common/http/etag';
import type { ListQuery } from '../common/http/list-query';
import { FallbackWriteQueue } from '../common/mongo/fallback-database';
import { changeScopeOf, EventsService } from '../events';
import { ProjectDto } from './dto/project.dto';
import { projectETag } from './project-etag';
import { toProjectListSpec, type ProjectListSpec } from './project.list-query';
import { ProjectNotFoundError } from './project.errors';
import { ProjectRepository } from './project.repository';
import type { Project, ProjectFields, ProjectPage } from './project.types';

/** The project owner a caller acts as: a root key's user, a team key's team. */
export function projectOwnerOf(principal: Principal): Tenant {
  switch (principal.kind) {
    case 'root':
    case 'team':
      return tenantOf(principal);
    case 'sub':
    case 'publishable':
    case 'operator':
      throw new ForbiddenError('Projects belong to users and teams: use a root or team key.');
  }
}

/** A project as the feed carries it: the JSON GET /project/{id} answers. */
function projectData(project: Project): Record<string, unknown> {
  return { ...ProjectDto.from(project) };
}

/** Writes of one project are queued in-process under this key (see FallbackWriteQueue). */
function writeKey(id: string): string {
  return `projects|${id}`;
}

/**
 * Projects of the caller. Updates and deletes are one query each, conditional on the revisions
 * If-Match names (when it names any); on FerretDB, which does not re-check a filter at write
 * time, they are also queued per project in this process, so concurrent If-Match writes on one
 * instance cannot both pass.
 */
@Injectable()
export class ProjectService implements OnModuleInit {
  private readonly writes = new FallbackWriteQueue();

  constructor(
    private readonly projects: ProjectRepository,
    private readonly events: EventsService,
  ) {}

  onModuleInit(): void {
    this.events.registerLookup('project', async ({ tenant, branch }, change) => {
      const project = await this.projects.findOwnedById(tenant, branch, change.key);
      return project ? { owner: null, data: projectData(project) } : null;
    });
  }

  /** Records a write of one project in the change feed (the data: the project as written). */
  private recorded<T extends Project | null>(
    principal: Principal,
    type: 'created' | 'updated' | 'deleted',
    id: string,
    write: () => Promise<T>,
  ): Promise<T> {
    if (principal.kind === 'operator' || principal.kind === 'sub') return write();
    return this.events.record(
      changeScopeOf(principal),
      [{ resource: 'project', type, key: id }],
      write,
      (project) => [
        {
          resource: 'project',
          type,
          key: id,
          owner: null,
          data: project === null ? null : projectData(project),
        },
      ],
    );
  }

  /** Deletes every project of a user or a team, in every branch: part of an erasure. */
  async deleteAllOf(tenant: Tenant): Promise<void> {
    await this.projects.deleteAllOwned(tenant);
  }

  /** Every project of a user or a team, by branch then creation: an account export. */
  listAllOf(tenant: Tenant): Promise<Project[]> {
    return this.projects.listAllOwned(tenant);
  }

  async create(principal: Principal, fields: ProjectFields): Promise<Project> {
    const owner = projectOwnerOf(principal);
    const id = new Types.ObjectId();
    return this.recorded(principal, 'created', id.toHexString(), () =>
      this.projects.insert(owner, principal.branch, fields, id),
    );
  }

  async get(principal: Principal, id: string): Promise<Project> {
    const project = await this.projects.findOwnedById(
      projectOwnerOf(principal),
      principal.branch,
      id,
    );
    if (!project) throw new ProjectNotFoundError(id);
    return project;
  }

  async update(
    principal: Principal,
    id: string,
    changes: Partial<ProjectFields>,
    ifMatch: IfMatch = NO_PRECONDITION,
  ): Promise<Project> {
    const owner = projectOwnerOf(principal);
    if (changes.name === undefined && changes.tags === undefined) {
      throw new ValidationFailedError(
        [{ field: '', message: 'send at least one of name, tags' }],
        'The body must change at least one of name, tags.',
      );
    }
    return this.writes.run(writeKey(id), () =>
      this.recorded(principal, 'updated', id, async () => {
        const revisions = revisionsOf(ifMatch, id);
        const project = await this.projects.updateOwned(
          owner,
          principal.branch,
          id,
          changes,
          revisions,
        );
        if (project) return project;
        throw await this.notWritten(principal, id, ifMatch);
      }),
    );
  }

  async remove(
    principal: Principal,
    id: string,
    ifMatch: IfMatch = NO_PRECONDITION,
  ): Promise<void> {
    const owner = projectOwnerOf(principal);
    await this.writes.run(writeKey(id), () =>
      this.recorded(principal, 'deleted', id, async () => {
        const revisions = revisionsOf(ifMatch, id);
        if (await this.projects.deleteOwned(owner, principal.branch, id, revisions)) return null;
        throw await this.notWritten(principal, id, ifMatch);
      }),
    );
  }

  /** Why a conditional write found nothing: 404 without If-Match, else 412 with the current tag. */
  private async notWritten(
    principal: Principal,
    id: string,
    ifMatch: IfMatch,
  ): Promise<DomainError> {
    if (ifMatch.kind === 'absent') return new ProjectNotFoundError(id);
    const current = await this.projects.findOwnedById(
      projectOwnerOf(principal),
      principal.branch,
      id,
    );
    return new PreconditionFailedError(current && projectETag(current));
  }

  /** One page of the caller's projects in the request branch; 400 for a query the rules refuse. */
  async list(
    principal: Principal,
    query: ListQuery,
  ): Promise<{ spec: ProjectListSpec; page: ProjectPage }> {
    const owner = projectOwnerOf(principal);
    const spec = toProjectListSpec(query);
    return { spec, page: await this.projects.listOwned(owner, principal.branch, spec) };
  }
}
