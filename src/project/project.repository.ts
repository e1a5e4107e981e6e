import { Inject, Injectable, type OnModuleInit } from '@nestjs/common';
import { InjectModel } from '@nestjs/mongoose';
import { Types, type Model, type QueryFilter } from 'mongoose';
import type { Tenant } from '../common/tenancy/namespace';
import { APP_CONFIG, type AppConfig } from '../config';
import { isObjectIdHex } from '../common/mongo/object-id';
import { atRevision, nextRevision } from '../common/mongo/revision';
import { walksBackwards } from '../common/pagination/keyset';
import type { ProjectCursor, ProjectListSpec } from './project.list-query';
import { ProjectDocument } from './project.schema';
import type { Project, ProjectFields, ProjectOwner, ProjectPage } from './project.types';

/**
 * The document of a new project, exactly as POST /project stores it. Exported so that tests and
 * tools that seed many projects at once (insertMany) write the same shape as the API.
 */
export function newProjectDocument(
  owner: ProjectOwner,
  branch: string,
  fields: ProjectFields,
  now: Date = new Date(),
): ProjectDocument {
  return {
    _id: new Types.ObjectId(),
    userId: owner.userId,
    teamId: owner.teamId,
    branch,
    name: fields.name,
    tags: [...fields.tags],
    createdAt: now,
    updatedAt: now,
    revision: 0,
  };
}

export function toProject(doc: ProjectDocument): Project {
  return {
    id: doc._id.toHexString(),
    userId: doc.userId ?? '',
    teamId: doc.teamId ?? '',
    branch: doc.branch ?? '',
    name: doc.name,
    tags: doc.tags ?? [],
    createdAt: doc.createdAt,
    updatedAt: doc.updatedAt,
    revision: doc.revision ?? 0,
  };
}

/**
 * The one owner filter: a tenant as projects store it, exactly one of the two fields non-empty.
 * Every query matches both fields, so a subject that equals a team id never meets the team.
 */
export function ownerFilter(tenant: Tenant): ProjectOwner {
  switch (tenant.kind) {
    case 'user':
      return { userId: tenant.id, teamId: '' };
    case 'team':
      return { userId: '', teamId: tenant.id };
  }
}

/** The owner + branch equality every project query starts with. */
function scopeFilter(owner: ProjectOwner, branch: string): QueryFilter<ProjectDocument> {
  return { userId: owner.userId, teamId: owner.teamId, branch };
}

/** A list request as MongoDB query parts. */
export interface ProjectListMongoQuery {
  filter: QueryFilter<ProjectDocument>;
  sort: Record<string, 1 | -1>;
  /** One more than the page size: a (limit + 1)th document means another page exists. */
  limit: number;
  /**
   * True when the scan runs against the requested order (a before[] cursor alone: the page is
   * the `limit` entries right before the cursor); the caller reverses the documents.
   */
  reversed: boolean;
}

/**
 * Builds the list query exactly as the repository runs it (the index tests explain this same
 * query). Scope equality + a range on the sort field + sort (field, _id) in one direction: one
 * index range scan, so page 1000 costs what page 1 costs. A cursor with an id is the pair
 * (value, id): `field ⋛ v AND (field ≷ v OR _id ≷ id)`, whose index bounds still start at v.
 */
export function buildListQuery(
  owner: ProjectOwner,
  branch: string,
  spec: ProjectListSpec,
): ProjectListMongoQuery {
  const field = spec.sort;
  const ascending = spec.sortOrder === 'asc';
  const reversed = walksBackwards(spec);
  const scanAscending = ascending !== reversed;

  const fieldOps: Record<string, unknown> = {};
  const ties: QueryFilter<ProjectDocument>[] = [];
  const bound = (cursor: ProjectCursor, greater: boolean): void => {
    const strict = greater ? '$gt' : '$lt';
    if (cursor.id === undefined) {
      fieldOps[strict] = cursor.value;
      return;
    }
    fieldOps[greater ? '$gte' : '$lte'] = cursor.value;
    ties.push({
      $or: [
        { [field]: { [strict]: cursor.value } },
        { _id: { [strict]: new Types.ObjectId(cursor.id) } },
      ],
    });
  };
  if (spec.after) bound(spec.after, ascending);
  if (spec.before) bound(spec.before, !ascending);

  const filter: Record<string, unknown> = { ...scopeFilter(owner, branch) };
  if (spec.filters.name !== undefined) {
    if (field === 'name') fieldOps.$eq = spec.filters.name;
    else filter.name = { $eq: spec.filters.name };
  }
  if (spec.filters.tag !== undefined) filter.tags = { $eq: spec.filters.tag };
  if (Object.keys(fieldOps).length > 0) filter[field] = fieldOps;
  if (ties.length === 1) filter.$or = ties[0]!.$or;
  else if (ties.length > 1) filter.$and = ties;

  const direction = scanAscending ? 1 : -1;
  return {
    filter: filter,
    sort: { [field]: direction, _id: direction },
    limit: spec.limit + 1,
    reversed,
  };
}

/**
 * Projects in MongoDB. Every method takes the owner (a tenant, turned into its stored form by
 * ownerFilter) and the branch and matches both, so a
 * service cannot read or change another owner's or another branch's project by forgetting a
 * condition. A malformed id finds nothing (the caller answers 404, never 400).
 */
@Injectable()
export class ProjectRepository implements OnModuleInit {
  private readonly maxTimeMs: number;

  constructor(
    @InjectModel(ProjectDocument.name) private readonly projects: Model<ProjectDocument>,
    @Inject(APP_CONFIG) config: AppConfig,
  ) {
    this.maxTimeMs = config.database.queryTimeoutMs;
  }

  async onModuleInit(): Promise<void> {
    await this.projects.init();
  }

  async insert(
    owner: Tenant,
    branch: string,
    fields: ProjectFields,
    id = new Types.ObjectId(),
  ): Promise<Project> {
    const doc = { ...newProjectDocument(ownerFilter(owner), branch, fields), _id: id };
    await this.projects.collection.insertOne(doc);
    return toProject(doc);
  }

  async findOwnedById(owner: Tenant, branch: string, id: string): Promise<Project | null> {
    if (!isObjectIdHex(id)) return null;
    const doc = await this.projects
      .findOne({ ...scopeFilter(ownerFilter(owner), branch), _id: new Types.ObjectId(id) })
      .maxTimeMS(this.maxTimeMs)
      .lean<ProjectDocument>()
      .exec();
    return doc ? toProject(doc) : null;
  }

  /**
   * Sets the given fields and updatedAt and bumps the revision, only at one of `revisions` when
   * they are given (If-Match). Null when the owner has no such project in the branch at them.
   */
  async updateOwned(
    owner: Tenant,
    branch: string,
    id: string,
    changes: Partial<ProjectFields>,
    revisions?: readonly number[],
  ): Promise<Project | null> {
    if (!isObjectIdHex(id)) return null;
    const doc = await this.projects
      .findOneAndUpdate(
        {
          ...scopeFilter(ownerFilter(owner), branch),
          _id: new Types.ObjectId(id),
          ...(revisions ? atRevision('revision', revisions) : {}),
        },
        { $set: { ...changes, updatedAt: new Date() }, ...nextRevision('revision') },
        { returnDocument: 'after', maxTimeMS: this.maxTimeMs },
      )
      .lean<ProjectDocument>()
      .exec();
    return doc ? toProject(doc) : null;
  }

  /**
   * False when the owner has no such project in the branch (at one of `revisions`, when they are
   * given).
   */
  async deleteOwned(
    owner: Tenant,
    branch: string,
    id: string,
    revisions?: readonly number[],
  ): Promise<boolean> {
    if (!isObjectIdHex(id)) return false;
    const result = await this.projects
      .deleteOne({
        ...scopeFilter(ownerFilter(owner), branch),
        _id: new Types.ObjectId(id),
        ...(revisions ? atRevision('revision', revisions) : {}),
      })
      .exec();
    return result.deletedCount === 1;
  }

  /** Deletes every project of the owner in every branch (an erasure); how many there were. */
  async deleteAllOwned(owner: Tenant): Promise<number> {
    const result = await this.projects.deleteMany(ownerFilter(owner)).exec();
    return result.deletedCount;
  }

  /** Every project of the owner, by branch then creation (an account export). */
  async listAllOwned(owner: Tenant): Promise<Project[]> {
    const docs = await this.projects
      .find(ownerFilter(owner))
      .sort({ branch: 1, _id: 1 })
      .maxTimeMS(this.maxTimeMs)
      .lean<ProjectDocument[]>()
      .exec();
    return docs.map(toProject);
  }

  /** One page of the owner's projects in the branch, in the requested order. */
  async listOwned(owner: Tenant, branch: string, spec: ProjectListSpec): Promise<ProjectPage> {
    const query = buildListQuery(ownerFilter(owner), branch, spec);
    const docs = await this.projects
      .find(query.filter)
      .sort(query.sort)
      .limit(query.limit)
      .maxTimeMS(this.maxTimeMs)
      .lean<ProjectDocument[]>()
      .exec();
    const hasMore = docs.length > spec.limit;
    const page = docs.slice(0, spec.limit).map(toProject);
    if (query.reversed) page.reverse();
    return { items: page, hasMore };
  }
}
