import { ApiExtraModels, ApiProperty, ApiPropertyOptional, getSchemaPath } from '@nestjs/swagger';

export class MeKeyDto {
  @ApiProperty({ example: '665f1c2a9b1e8a0012345678' })
  id!: string;

  /** The key's first characters, as listed by GET /api-keys. */
  @ApiProperty({ example: 'pds_a1b2c3' })
  prefix!: string;

  @ApiProperty({ example: 'ci' })
  name!: string;

  @ApiProperty({ type: String, format: 'date-time', nullable: true, example: null })
  expiresAt!: string | null;

  /** The scopes the key holds (docs/keys.md, "Authentication"); null: every scope. */
  @ApiProperty({ type: [String], nullable: true, example: null })
  scopes!: string[] | null;

  /** The collections the key reaches, by name or `prefix*`, read or write; null: every collection. */
  @ApiProperty({
    type: 'object',
    additionalProperties: { type: 'string', enum: ['read', 'write'] },
    nullable: true,
    example: null,
  })
  collections!: Record<string, 'read' | 'write'> | null;

  /** The addresses or CIDRs the key may be used from; null: any. */
  @ApiProperty({ type: [String], nullable: true, example: null })
  allowedIps!: string[] | null;

  /** Last use, to within API_KEY_LAST_USED_INTERVAL_MS; null: none recorded yet. */
  @ApiProperty({ type: String, format: 'date-time', nullable: true, example: null })
  lastUsedAt!: string | null;
}

/** How the request authenticated: an API key, or an access token of a trusted issuer. */
export class MeCredentialDto {
  @ApiProperty({ enum: ['key', 'token'], example: 'key' })
  kind!: 'key' | 'token';

  /** The token's issuer (tokens only). */
  @ApiPropertyOptional({ example: 'https://login.example.com/realms/apps' })
  issuer?: string;

  /** The token's subject at its issuer (tokens only): with the issuer, the identity. */
  @ApiPropertyOptional({ example: '248289761001' })
  tokenSubject?: string;

  /** When the token expires (tokens only). */
  @ApiPropertyOptional({ type: String, format: 'date-time', example: '2026-11-29T16:00:00.000Z' })
  expiresAt?: string;
}

export class QuotaUseDto {
  @ApiProperty({ example: 3 })
  used!: number;

  /** The tenant's limit (its plan's, else the deployment's); null: none. */
  @ApiProperty({ type: Number, nullable: true, example: 100 })
  limit!: number | null;
}

/**
 * The values GET /me showed before plans, kept as they were for the clients that read them:
 * `limits` (with `plan`) is the full view.
 */
@ApiExtraModels(QuotaUseDto)
export class QuotaDto {
  /** Data collections of the caller's namespace in the request branch (MAX_COLLECTIONS); null for the operator, who has none. A key limited to collections counts only those it reaches. */
  @ApiProperty({ nullable: true, allOf: [{ $ref: getSchemaPath(QuotaUseDto) }] })
  collections!: QuotaUseDto | null;

  /**
   * Bytes of the tenant's files, over all its branches, with uploads under way counted at what
   * they reserved (FILE_QUOTA_BYTES); null for the operator.
   */
  @ApiProperty({ nullable: true, allOf: [{ $ref: getSchemaPath(QuotaUseDto) }] })
  files!: QuotaUseDto | null;

  /** Indexes per collection besides _id (MAX_INDEXES). */
  @ApiProperty({ example: 20 })
  indexesPerCollection!: number;

  /** Requests per key per rate-limit window (RATE_LIMIT_MAX, RATE_LIMIT_WINDOW_MS). */
  @ApiProperty({ example: 1000 })
  requestsPerWindow!: number;

  @ApiProperty({ example: 60000 })
  windowMs!: number;
}

/** The plan whose limits apply (docs/plans.md, "The active plan"). */
export class MePlanDto {
  @ApiProperty({ example: 'pro' })
  name!: string;

  @ApiProperty({ format: 'date-time', example: '2026-01-01T00:00:00.000Z' })
  since!: string;

  /** When the plan ends; null: never. */
  @ApiProperty({
    type: String,
    format: 'date-time',
    nullable: true,
    example: '2027-01-01T00:00:00.000Z',
  })
  until!: string | null;
}

/** One limit: its value, and what is used of it where the service knows that cheaply. */
export class LimitUseDto {
  /** The limit; null: none. */
  @ApiProperty({ type: Number, nullable: true, example: 100 })
  limit!: number | null;

  /** What is used of it; absent where it is not counted here. */
  @ApiPropertyOptional({ example: 3 })
  used?: number;
}

/**
 * Every limit that applies to the caller (docs/plans.md, "Limits"): the active plan's, those it
 * leaves out the deployment's. `used` is shown for collections (of the namespace in the request
 * branch, as `quota.collections` counts them), fileBytes (of the tenant) and webhooks (of the
 * namespace); the operator, who has no tenant, sees the deployment's values without use.
 */
export class MeLimitsDto {
  @ApiProperty({ type: LimitUseDto })
  collections!: LimitUseDto;

  @ApiProperty({ type: LimitUseDto })
  indexesPerCollection!: LimitUseDto;

  @ApiProperty({ type: LimitUseDto })
  itemsPerCollection!: LimitUseDto;

  @ApiProperty({ type: LimitUseDto })
  fileBytes!: LimitUseDto;

  @ApiProperty({ type: LimitUseDto })
  webhooks!: LimitUseDto;

  @ApiProperty({ type: LimitUseDto })
  requestsPerWindow!: LimitUseDto;

  @ApiProperty({ type: LimitUseDto })
  streamsPerKey!: LimitUseDto;

  @ApiProperty({ type: LimitUseDto })
  importBytes!: LimitUseDto;
}

/** Who the request's key or token acts as, in which branch, with which key and quota. */
@ApiExtraModels(MeKeyDto, MeCredentialDto, MePlanDto)
export class MeDto {
  @ApiProperty({ enum: ['root', 'sub', 'team', 'operator'], example: 'root' })
  kind!: 'root' | 'sub' | 'team' | 'operator';

  /** The user (root and sub keys). */
  @ApiPropertyOptional({ example: 'auth0|ada' })
  subject?: string;

  /** The sub profile acted as (sub keys). */
  @ApiPropertyOptional({ example: 'web-app' })
  clientId?: string;

  @ApiPropertyOptional({ example: 'acct-42' })
  accountId?: string;

  @ApiPropertyOptional({ example: '665f1c2a9b1e8a0012345679' })
  profileId?: string;

  /** The team (team keys, and member root keys acting with X-Team). */
  @ApiPropertyOptional({ example: '665f1c2a9b1e8a0012345670' })
  teamId?: string;

  /** A member's root key acting for the team (X-Team): the member's subject. */
  @ApiPropertyOptional({ example: 'auth0|ada' })
  actingSubject?: string;

  /** The request branch ('' = the standard branch). */
  @ApiProperty({ example: '' })
  branch!: string;

  /** The branch the key is bound to; null when it is not bound (the branch comes from X-Branch). */
  @ApiProperty({ type: String, nullable: true, example: null })
  boundBranch!: string | null;

  /** How the request authenticated: with a key (the operator key too) or with an access token. */
  @ApiProperty({ type: MeCredentialDto })
  authenticatedWith!: MeCredentialDto;

  /**
   * Every scope the caller holds, a `…:write` scope's `…:read` included (docs/keys.md, "Authentication"):
   * a key's scopes, or a token's scope claim mapped onto the service's scopes.
   */
  @ApiProperty({ type: [String], example: ['data:read', 'data:write'] })
  scopes!: string[];

  /** The key itself; null for the operator key, which is configuration, not a stored key, and for a token. */
  @ApiProperty({ nullable: true, allOf: [{ $ref: getSchemaPath(MeKeyDto) }] })
  key!: MeKeyDto | null;

  /** The earlier view of some limits, kept for the clients that read it: `limits` is the full one. */
  @ApiProperty({ type: QuotaDto })
  quota!: QuotaDto;

  /**
   * The tenant's active plan; null when none applies (the deployment's limits) and for the
   * operator. A user's plans are its root profile's: its sub keys show them too; a team's
   * members acting for it (X-Team) show the team's.
   */
  @ApiProperty({ nullable: true, allOf: [{ $ref: getSchemaPath(MePlanDto) }] })
  plan!: MePlanDto | null;

  @ApiProperty({ type: MeLimitsDto })
  limits!: MeLimitsDto;
}

/** A branch in which the caller's namespace has collections. */
export class BranchDto {
  /** The branch ('' = the standard branch), as X-Branch names it. */
  @ApiProperty({ example: 'staging' })
  name!: string;

  /** How many collections the namespace has in it (a key limited to collections: of those it reaches). */
  @ApiProperty({ example: 3 })
  collections!: number;
}
