import { Injectable } from '@nestjs/common';
import type { Principal } from '../auth';
import { ForbiddenError, ValidationFailedError } from '../common/errors';
import type { ListQuery } from '../common/http/list-query';
import { toProjectListSpec, type ProjectListSpec } from './project.list-query';
import { ProjectNotFoundError } from './project.errors';
import { ProjectRepository } from './project.repository';
import type { Project, ProjectFields, ProjectOwner, ProjectPage } from './project.types';

/** The project owner a caller acts as: a root key owns by subject, a team key by team id. */
export function projectOwnerOf(principal: Principal): ProjectOwner {
  switch (principal.kind) {
    case 'root':
      return { userId: principal.subject, teamId: '' };
    case 'team':
      return { userId: '', teamId: principal.teamId };
    case 'sub':
    case 'operator':
      throw new ForbiddenError('Projects belong to users and teams: use a root or team key.');
  }
}

@Injectable()
export class ProjectService {
  constructor(private readonly projects: ProjectRepository) {}

  async create(principal: Principal, fields: ProjectFields): Promise<Project> {
    return this.projects.insert(projectOwnerOf(principal), principal.branch, fields);
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
  ): Promise<Project> {
    const owner = projectOwnerOf(principal);
    if (changes.name === undefined && changes.tags === undefined) {
      throw new ValidationFailedError(
        [{ field: '', message: 'send at least one of name, tags' }],
        'The body must change at least one of name, tags.',
      );
    }
    const project = await this.projects.updateOwned(owner, principal.branch, id, changes);
    if (!project) throw new ProjectNotFoundError(id);
    return project;
  }

  async remove(principal: Principal, id: string): Promise<void> {
    const deleted = await this.projects.deleteOwned(
      projectOwnerOf(principal),
      principal.branch,
      id,
    );
    if (!deleted) throw new ProjectNotFoundError(id);
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
