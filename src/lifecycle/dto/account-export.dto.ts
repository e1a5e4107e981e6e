import { ApiProperty, getSchemaPath } from '@nestjs/swagger';
import { ApiKeyDto } from '../../auth/dto/api-key.dto';
import { ApiSchemaPatch } from '../../common/http/openapi';
import {
  ExportEndRecordDto,
  ExportItemRecordDto,
  ManifestCollectionDto,
  ManifestHeadDto,
} from '../../data/transfer/dto/transfer.dto';
import { FileDto } from '../../files';
import { LinkedIdentityDto } from '../../identity';
import { ProjectDto } from '../../project/dto/project.dto';
import { ProfileDto } from '../../profile';
import { MyTeamDto } from '../../team';
import { WebhookDto } from '../../webhooks/dto/webhook.dto';

/*
 * The records of an account export. Each one is open (additionalProperties), as the export format
 * promises: what a later version adds is a new optional member, which readers ignore. The objects
 * they carry are the API's own DTOs, exactly as the API answers them elsewhere.
 */

export class AccountExportSubjectDto {
  @ApiProperty({ example: 'auth0|5f7c8ec7c33c6c004bbafe82' })
  subject!: string;
}

export class AccountExportBranchDto {
  /** '' for the standard branch. */
  @ApiProperty({ example: '' })
  branch!: string;

  /** The branch's newest event when the export began: GET /events?after= this (with X-Branch) gives what changed since. Null when the change feed is off. */
  @ApiProperty({ type: String, nullable: true, example: '1042' })
  feedPosition!: string | null;

  @ApiProperty({ type: [ManifestCollectionDto] })
  collections!: ManifestCollectionDto[];
}

/** The first line of an account export. */
@ApiSchemaPatch({ additionalProperties: true })
export class AccountExportManifestDto extends ManifestHeadDto {
  @ApiProperty({ type: AccountExportSubjectDto })
  account!: AccountExportSubjectDto;

  /** Every branch holding anything of the account, by name. */
  @ApiProperty({ type: [AccountExportBranchDto] })
  branches!: AccountExportBranchDto[];
}

/** The root profile. */
@ApiSchemaPatch({ additionalProperties: true })
export class AccountProfileRecordDto {
  @ApiProperty({ enum: ['profile'] })
  type!: 'profile';

  @ApiProperty({ type: ProfileDto })
  profile!: ProfileDto;
}

/** A sub profile, in any branch. */
@ApiSchemaPatch({ additionalProperties: true })
export class AccountSubProfileRecordDto {
  @ApiProperty({ enum: ['subProfile'] })
  type!: 'subProfile';

  @ApiProperty({ type: ProfileDto })
  profile!: ProfileDto;
}

/** A key of the user (root or sub, any branch): its metadata, never its secret. */
@ApiSchemaPatch({ additionalProperties: true })
export class AccountApiKeyRecordDto {
  @ApiProperty({ enum: ['apiKey'] })
  type!: 'apiKey';

  @ApiProperty({ type: ApiKeyDto })
  key!: ApiKeyDto;
}

/** An identity of an identity provider linked to the user (docs/authentication.md, "Identities"). */
@ApiSchemaPatch({ additionalProperties: true })
export class AccountIdentityRecordDto {
  @ApiProperty({ enum: ['identity'] })
  type!: 'identity';

  @ApiProperty({ type: LinkedIdentityDto })
  identity!: LinkedIdentityDto;
}

/** A project of the user, in any branch. */
@ApiSchemaPatch({ additionalProperties: true })
export class AccountProjectRecordDto {
  @ApiProperty({ enum: ['project'] })
  type!: 'project';

  @ApiProperty({ type: ProjectDto })
  project!: ProjectDto;
}

/** A team the user belongs to (GET /admin/users/{subject}'s entry) and since when. */
export class AccountMembershipDto extends MyTeamDto {
  @ApiProperty({ format: 'date-time' })
  createdAt!: string;
}

@ApiSchemaPatch({ additionalProperties: true })
export class AccountMembershipRecordDto {
  @ApiProperty({ enum: ['membership'] })
  type!: 'membership';

  @ApiProperty({ type: AccountMembershipDto })
  membership!: AccountMembershipDto;
}

/** A webhook of the user's namespace in `branch`, without its signing secret. */
@ApiSchemaPatch({ additionalProperties: true })
export class AccountWebhookRecordDto {
  @ApiProperty({ enum: ['webhook'] })
  type!: 'webhook';

  @ApiProperty({ example: '' })
  branch!: string;

  @ApiProperty({ type: WebhookDto })
  webhook!: WebhookDto;
}

/**
 * A stored file of the user's namespace in `branch`: its metadata as GET /files/{id} answers it,
 * never its bytes (GET /files/{id}/content downloads them; a branch's GET /export carries them).
 * Not a namespace export's `file` line, which its bytes follow.
 */
@ApiSchemaPatch({ additionalProperties: true })
export class AccountFileRecordDto {
  @ApiProperty({ enum: ['fileMetadata'] })
  type!: 'fileMetadata';

  @ApiProperty({ example: '' })
  branch!: string;

  @ApiProperty({ type: FileDto })
  file!: FileDto;
}

/** Every record class of an account export, for @ApiExtraModels. */
export const ACCOUNT_EXPORT_MODELS = [
  AccountExportManifestDto,
  AccountProfileRecordDto,
  AccountSubProfileRecordDto,
  AccountApiKeyRecordDto,
  AccountIdentityRecordDto,
  AccountProjectRecordDto,
  AccountMembershipRecordDto,
  AccountWebhookRecordDto,
  AccountFileRecordDto,
  ExportItemRecordDto,
  ExportEndRecordDto,
];

/** The 200 of the account exports: one of these records per line. */
export const ACCOUNT_EXPORT_RESPONSE = {
  description:
    'The account, one record per line (streamed): the manifest, the profile, sub profiles, keys (metadata only), identities, projects, memberships, webhooks (no secret), files (metadata, not their bytes), then the items of every branch by branch, collection and _id (with their branch), then the end over every line between',
  content: {
    'application/x-ndjson': {
      schema: {
        oneOf: ACCOUNT_EXPORT_MODELS.map((model) => ({ $ref: getSchemaPath(model) })),
      },
    },
  },
};
