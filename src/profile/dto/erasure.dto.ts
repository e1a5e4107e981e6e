import { ApiProperty } from '@nestjs/swagger';
import { IsString, MaxLength } from 'class-validator';
import { Reply } from '../../common/http/reply';
import { JsonObjectBody } from '../../common/http/validation';
import { TENANT_KINDS, type TenantKind } from '../../common/tenancy/namespace';
import type { Erasure, ErasureStatus } from '../account-erasure.port';

/** An erasure as DELETE /profile and the operator's erasure routes answer it. */
export class ErasureDto {
  @ApiProperty({ example: '6740a1f3c2b4e5d6f7a8b9c0', pattern: '^[0-9a-f]{24}$' })
  id!: string;

  @ApiProperty({ enum: TENANT_KINDS })
  kind!: TenantKind;

  /** `running` until every step is done; a running erasure survives restarts. */
  @ApiProperty({ enum: ['running', 'done'] })
  status!: ErasureStatus;

  /** The steps finished, in order: keys, memberships, projects, collections, files, owner. */
  @ApiProperty({
    type: 'array',
    items: {
      type: 'string',
      enum: ['keys', 'memberships', 'projects', 'collections', 'files', 'owner'],
    },
    example: ['keys', 'memberships'],
  })
  stepsDone!: string[];

  @ApiProperty({ minimum: 0, example: 12 })
  collectionsDropped!: number;

  /** How often it was started or taken over: above 1, it was resumed after an interruption. */
  @ApiProperty({ minimum: 1, example: 1 })
  runs!: number;

  @ApiProperty({ format: 'date-time' })
  requestedAt!: string;

  @ApiProperty({ format: 'date-time', nullable: true, type: String })
  finishedAt!: string | null;

  static from(erasure: Erasure): ErasureDto {
    return {
      id: erasure.id,
      kind: erasure.kind,
      status: erasure.status,
      stepsDone: erasure.stepsDone,
      collectionsDropped: erasure.collectionsDropped,
      runs: erasure.runs,
      requestedAt: erasure.requestedAt.toISOString(),
      finishedAt: erasure.finishedAt?.toISOString() ?? null,
    };
  }
}

/** Body of DELETE /profile: the subject, typed out, so that no stray request erases an account. */
@JsonObjectBody()
export class ConfirmErasureDto {
  @IsString()
  @MaxLength(128)
  @ApiProperty({ example: 'auth0|5f7c8ec7c33c6c004bbafe82', maxLength: 128 })
  confirm!: string;
}

/** The 202 of every route that starts an erasure. */
export const ERASURE_ACCEPTED = {
  type: ErasureDto,
  description:
    'The erasure: its keys are revoked already, the rest runs in the background (`Location` names it). A repeated request answers the same erasure.',
  headers: { Location: { description: '/admin/erasures/{id}', schema: { type: 'string' } } },
};

/** 202 with the erasure, and where the operator follows it. */
export function acceptedErasure(erasure: Erasure): Reply<ErasureDto> {
  return Reply.located(`/admin/erasures/${erasure.id}`, ErasureDto.from(erasure));
}
