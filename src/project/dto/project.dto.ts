import { applyDecorators } from '@nestjs/common';
import { ApiProperty } from '@nestjs/swagger';
import {
  ArrayMaxSize,
  ArrayUnique,
  IsArray,
  IsString,
  MaxLength,
  MinLength,
} from 'class-validator';
import { OptionalField } from '../../common/dto';
import { ApiSchemaPatch } from '../../common/http/openapi';
import type { Project } from '../project.types';

export const PROJECT_NAME_MAX = 200;
export const PROJECT_TAGS_MAX = 50;
export const PROJECT_TAG_MAX = 64;

/** Tags: optional, up to 50 distinct strings of 1–64 characters (the same rules on create and update). */
function ProjectTags(example: string[]): PropertyDecorator {
  return applyDecorators(
    ApiProperty({
      type: [String],
      required: false,
      maxItems: PROJECT_TAGS_MAX,
      uniqueItems: true,
      items: { type: 'string', minLength: 1, maxLength: PROJECT_TAG_MAX },
      example,
    }),
    OptionalField(),
    IsArray(),
    ArrayMaxSize(PROJECT_TAGS_MAX),
    ArrayUnique(),
    IsString({ each: true }),
    MinLength(1, { each: true }),
    MaxLength(PROJECT_TAG_MAX, { each: true }),
  );
}

export class CreateProjectDto {
  /** Name of the project, 1–200 characters. */
  @IsString()
  @MinLength(1)
  @MaxLength(PROJECT_NAME_MAX)
  @ApiProperty({ example: 'Website relaunch', minLength: 1, maxLength: PROJECT_NAME_MAX })
  name!: string;

  /** Up to 50 distinct tags of 1–64 characters; duplicates are a 400. Default []. */
  @ProjectTags(['web', 'q3'])
  tags?: string[];
}

/** The fields to change; at least one. Tags are replaced as a whole. */
@ApiSchemaPatch({ minProperties: 1 })
export class UpdateProjectDto {
  /** New name, 1–200 characters. */
  @OptionalField()
  @IsString()
  @MinLength(1)
  @MaxLength(PROJECT_NAME_MAX)
  @ApiProperty({
    required: false,
    example: 'Website relaunch 2027',
    minLength: 1,
    maxLength: PROJECT_NAME_MAX,
  })
  name?: string;

  /** New tags (replace the old ones; [] removes all): up to 50 distinct tags of 1–64 characters. */
  @ProjectTags(['web'])
  tags?: string[];
}

/** A project. Exactly one of userId and teamId is non-empty. */
export class ProjectDto {
  @ApiProperty({ example: '665f1c2a9b1e8a0012345678' })
  id!: string;

  @ApiProperty({
    description: "Subject of the owning user; '' when a team owns the project",
    example: 'auth0|5f7c8ec7c33c6c004bbafe82',
  })
  userId!: string;

  @ApiProperty({
    description: "Id of the owning team; '' when a user owns the project",
    example: '',
  })
  teamId!: string;

  @ApiProperty({
    description: "Branch the project lives in; '' for the standard branch",
    example: '',
  })
  branch!: string;

  @ApiProperty({ example: 'Website relaunch' })
  name!: string;

  @ApiProperty({ type: [String], example: ['web', 'q3'] })
  tags!: string[];

  @ApiProperty({ format: 'date-time', example: '2026-05-04T09:30:00.000Z' })
  createdAt!: string;

  @ApiProperty({ format: 'date-time', example: '2026-05-04T09:30:00.000Z' })
  updatedAt!: string;

  static from(project: Project): ProjectDto {
    return {
      id: project.id,
      userId: project.userId,
      teamId: project.teamId,
      branch: project.branch,
      name: project.name,
      tags: project.tags,
      createdAt: project.createdAt.toISOString(),
      updatedAt: project.updatedAt.toISOString(),
    };
  }
}
