import { Prop, Schema, SchemaFactory } from '@nestjs/mongoose';
import type { Types } from 'mongoose';

/**
 * One document per project. The owner is stored as the API shows it: exactly one of `userId`
 * (a root user's subject) and `teamId` is non-empty, the other is ''. Every query matches BOTH
 * fields by equality (`{userId: s, teamId: ''}` or `{userId: '', teamId: t}`), so a subject can
 * never match a team's projects even if the strings were equal, and both fields lead every index.
 * Timestamps are set by the repository (not by mongoose) so seeded documents are built by the
 * same function as created ones.
 */
@Schema({ collection: 'projects', versionKey: false, minimize: false })
export class ProjectDocument {
  _id!: Types.ObjectId;

  @Prop({ type: String, default: '' })
  userId!: string;

  @Prop({ type: String, default: '' })
  teamId!: string;

  @Prop({ type: String, default: '' })
  branch!: string;

  @Prop({ type: String, required: true })
  name!: string;

  @Prop({ type: [String], default: [] })
  tags!: string[];

  @Prop({ type: Date, required: true })
  createdAt!: Date;

  @Prop({ type: Date, required: true })
  updatedAt!: Date;

  /**
   * Counts the writes of the project (0 when created), bumped in the same update as each
   * change; with the id it makes the ETag, and If-Match writes filter on it. Projects created
   * before it existed lack it and count as 0.
   */
  @Prop({ type: Number, default: 0 })
  revision?: number;
}

export const ProjectSchema = SchemaFactory.createForClass(ProjectDocument);

/** The fields a project list can be sorted by, each with its own index below. */
export const PROJECT_SORT_FIELDS = ['createdAt', 'updatedAt', 'name'] as const;
export type ProjectSortField = (typeof PROJECT_SORT_FIELDS)[number];

/** Owner + branch: the equality prefix of every project query. */
export const PROJECT_SCOPE_KEY = { userId: 1, teamId: 1, branch: 1 } as const;

/** Index of the list sorted by `field`: scope equality, then the (field, _id) keyset. */
export function projectSortIndexKey(field: ProjectSortField): Record<string, 1> {
  return { ...PROJECT_SCOPE_KEY, [field]: 1, _id: 1 };
}

// GET /project?sort=createdAt (the default), updatedAt and name, in either order, with or without
// an after[]/before[] cursor: owner + branch are equality bounds, the cursor is a range on the
// sort field (plus _id for ties) and the sort (field, _id) is the index order (read backwards
// for desc). So every page is one index range scan of `limit + 1` keys, whatever its position.
// The same indexes serve `name=` (an equality inside the name index's range) and, as a filtered
// scan of the owner's own range, `tag=`.
for (const field of PROJECT_SORT_FIELDS) {
  ProjectSchema.index(projectSortIndexKey(field), { name: `project_scope_${field}_id` });
}

// GET /project?tag=x (default sort createdAt): without it a rare tag would make the list walk
// every project of the owner in the createdAt index to find `limit` matches. tags is multikey but
// is bound to one point, so (createdAt, _id) still comes in index order and no sort stage is
// needed. Other sorts with a tag filter use their sort index and filter (bounded by the owner's
// projects); one more index per sort field was not worth its write cost.
ProjectSchema.index(
  { ...PROJECT_SCOPE_KEY, tags: 1, createdAt: 1, _id: 1 },
  { name: 'project_scope_tags_createdAt_id' },
);
