import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { Type } from 'class-transformer';
import { IsDefined, IsInt, IsObject, Max, Min, ValidateNested } from 'class-validator';
import { OptionalField } from '../../common/dto';
import { ApiSchemaPatch } from '../../common/http/openapi';
import { sharedSchemaRef } from '../../common/http/openapi-schemas';
import { JsonObjectBody } from '../../common/http/validation';
import { PLAN_LIMIT_MAX, type Plan } from '../../plans';
import { ProfileJson } from '../../profile';

const M = PLAN_LIMIT_MAX;

/**
 * The limits a plan sets (docs/plans.md, "Limits"): any of these, each an integer from 0 (nothing
 * may grow) to the bound of its deployment setting; one left out falls back to the setting.
 * Another name is a 400.
 */
// A limit the service does not know is refused (400), as a body's unknown member is.
@ApiSchemaPatch({ additionalProperties: false })
export class PlanLimitsDto {
  /** Collections per namespace (tenant and branch) [MAX_COLLECTIONS]. */
  @OptionalField()
  @IsInt()
  @Min(0)
  @Max(M.collections)
  @ApiPropertyOptional({ type: 'integer', minimum: 0, maximum: M.collections, example: 20 })
  collections?: number;

  /** Indexes of one collection besides _id [MAX_INDEXES]. */
  @OptionalField()
  @IsInt()
  @Min(0)
  @Max(M.indexesPerCollection)
  @ApiPropertyOptional({ type: 'integer', minimum: 0, maximum: M.indexesPerCollection, example: 5 })
  indexesPerCollection?: number;

  /** Items of one collection [none: unlimited]. At least 1. */
  @OptionalField()
  @IsInt()
  @Min(1)
  @Max(M.itemsPerCollection)
  @ApiPropertyOptional({
    type: 'integer',
    minimum: 1,
    maximum: M.itemsPerCollection,
    example: 10000,
  })
  itemsPerCollection?: number;

  /** Bytes of the tenant's stored files, over all its branches [FILE_QUOTA_BYTES]. */
  @OptionalField()
  @IsInt()
  @Min(0)
  @Max(M.fileBytes)
  @ApiPropertyOptional({ type: 'integer', minimum: 0, maximum: M.fileBytes, example: 104857600 })
  fileBytes?: number;

  /** Webhooks per namespace [WEBHOOK_MAX]. */
  @OptionalField()
  @IsInt()
  @Min(0)
  @Max(M.webhooks)
  @ApiPropertyOptional({ type: 'integer', minimum: 0, maximum: M.webhooks, example: 2 })
  webhooks?: number;

  /** Requests of one key per RATE_LIMIT_WINDOW_MS [RATE_LIMIT_MAX]. */
  @OptionalField()
  @IsInt()
  @Min(0)
  @Max(M.requestsPerWindow)
  @ApiPropertyOptional({ type: 'integer', minimum: 0, maximum: M.requestsPerWindow, example: 300 })
  requestsPerWindow?: number;

  /** Open event streams of one key [EVENTS_MAX_STREAMS_PER_KEY]. */
  @OptionalField()
  @IsInt()
  @Min(0)
  @Max(M.streamsPerKey)
  @ApiPropertyOptional({ type: 'integer', minimum: 0, maximum: M.streamsPerKey, example: 2 })
  streamsPerKey?: number;

  /** Bytes of one POST /import body [IMPORT_MAX_BYTES]. */
  @OptionalField()
  @IsInt()
  @Min(0)
  @Max(M.importBytes)
  @ApiPropertyOptional({ type: 'integer', minimum: 0, maximum: M.importBytes, example: 10485760 })
  importBytes?: number;
}

/** The body of PUT /admin/plans/{planName}. */
@JsonObjectBody()
export class PutPlanDto {
  /** The limits the plan sets; `{}`: the deployment's for all. */
  @IsDefined()
  @IsObject()
  @ValidateNested()
  @Type(() => PlanLimitsDto)
  @ApiProperty({ type: PlanLimitsDto })
  limits!: PlanLimitsDto;

  /** The operator's own data about the plan (e.g. price, display name): the rules of profile settings. */
  @OptionalField()
  @ProfileJson({ values: 'json', patch: false })
  @ApiPropertyOptional({
    type: 'object',
    additionalProperties: sharedSchemaRef('ProfileJsonValue'),
    example: { displayName: 'Pro', priceCents: 2900 },
  })
  metadata?: Record<string, unknown>;
}

/** A plan of the catalogue. */
export class CatalogPlanDto {
  @ApiProperty({ example: 'pro' })
  name!: string;

  /** The limits the plan sets; those left out are the deployment's. */
  @ApiProperty({ type: PlanLimitsDto })
  limits!: PlanLimitsDto;

  @ApiProperty({ type: 'object', additionalProperties: true, example: { displayName: 'Pro' } })
  metadata!: Record<string, unknown>;

  /** 1 when created, +1 with every PUT: the ETag is `"plan-<version>"`. */
  @ApiProperty({ example: 3 })
  version!: number;

  @ApiProperty({ format: 'date-time' })
  updatedAt!: string;

  static from(plan: Plan): CatalogPlanDto {
    return {
      name: plan.name,
      // The catalogue stores numbers only (PlanRepository keeps nothing else).
      limits: { ...plan.limits } as PlanLimitsDto,
      metadata: plan.metadata,
      version: plan.version,
      updatedAt: plan.updatedAt.toISOString(),
    };
  }
}
