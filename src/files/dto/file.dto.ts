import { ApiProperty } from '@nestjs/swagger';
import { IsInt, Max, Min } from 'class-validator';
import type { FileRecord } from '../file-records.repository';

/** A stored file. */
export class FileDto {
  @ApiProperty({ example: '665f1c2a9b1e8a0012345678', pattern: '^[0-9a-f]{24}$' })
  id!: string;

  @ApiProperty({ example: 'avatar.png', maxLength: 255 })
  name!: string;

  @ApiProperty({ example: 52311, description: 'Bytes' })
  size!: number;

  @ApiProperty({
    example: 'image/png',
    description:
      'One media type, normalised (lower-case type and parameter names, parameters in name order); files stored before types were checked may hold what was sent',
  })
  contentType!: string;

  /** Hex SHA-256 of the bytes; the download's strong ETag is this in quotes. */
  @ApiProperty({ example: 'e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855' })
  sha256!: string;

  @ApiProperty({ type: String, format: 'date-time' })
  createdAt!: string;

  /** The uploader's owner value: a root key's subject, a sub key's accountId, a team key's team id. */
  @ApiProperty({ example: 'auth0|ada' })
  owner!: string;

  static from(file: FileRecord): FileDto {
    return {
      id: file.fileId,
      name: file.name,
      size: file.size,
      contentType: file.contentType,
      sha256: file.sha256 ?? '',
      createdAt: file.createdAt.toISOString(),
      owner: file.owner,
    };
  }
}

/** The most FILE_LINK_MAX_SECONDS may be (a year); the configured maximum is checked too. */
export const LINK_SECONDS_CEILING = 365 * 86_400;

export class FileLinkRequestDto {
  /** How long the link works (seconds), at most FILE_LINK_MAX_SECONDS (7 days by default). */
  @IsInt()
  @Min(1)
  @Max(LINK_SECONDS_CEILING)
  @ApiProperty({ example: 3600, minimum: 1, maximum: LINK_SECONDS_CEILING, type: 'integer' })
  expiresInSeconds!: number;
}

export class FileLinkDto {
  /** Downloads the file without a key until `expiresAt` or until the file is deleted. */
  @ApiProperty({ example: 'https://api.example.com/file-links/eyJ2IjoxLC….Zm9v' })
  url!: string;

  /** The same link relative to the service's root. */
  @ApiProperty({ example: '/file-links/eyJ2IjoxLC….Zm9v' })
  path!: string;

  @ApiProperty({ type: String, format: 'date-time' })
  expiresAt!: string;
}
