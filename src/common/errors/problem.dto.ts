import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';

export class FieldErrorDto {
  /** Path of the offending input: a body path (`item.a.b`), a query key or a header name. */
  @ApiProperty({ example: 'name' })
  field!: string;

  @ApiProperty({ example: 'name must be shorter than or equal to 200 characters' })
  message!: string;

  /** SCHEMA_VIOLATION: JSON Pointer (RFC 6901) to the value in the item's own fields (`''`: the item). */
  @ApiPropertyOptional({ example: '/age' })
  pointer?: string;

  /** SCHEMA_VIOLATION: the JSON Schema keyword the value fails. */
  @ApiPropertyOptional({ example: 'minimum' })
  keyword?: string;
}

/** RFC 9457 problem details (`application/problem+json`), returned for every error. */
export class ProblemDto {
  @ApiProperty({ example: 'urn:problem:validation-failed' })
  type!: string;

  @ApiProperty({ example: 'The request is not valid' })
  title!: string;

  @ApiProperty({ example: 400 })
  status!: number;

  @ApiProperty({ example: '1 field is not valid: name' })
  detail!: string;

  @ApiProperty({ example: '/project' })
  instance!: string;

  // Its `enum` (every code of the API) is the error catalog's, added where the document is
  // built: common cannot name the modules' codes. (A doc comment here would be a description.)
  @ApiProperty({ example: 'VALIDATION_FAILED' })
  code!: string;

  @ApiProperty({
    example: '5f0c6c1e-3b9f-4d4e-9a43-2b1f0e6d7a11',
    description:
      'Request id (also in X-Request-Id); the W3C trace id instead when the service traces requests (OpenTelemetry)',
  })
  traceId!: string;

  @ApiPropertyOptional({
    type: [FieldErrorDto],
    description: 'Every offending field (validation errors)',
  })
  errors?: FieldErrorDto[];
}
