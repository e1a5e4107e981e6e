import { ApiProperty } from '@nestjs/swagger';
import type { LinkedIdentity } from '../identity-links';

/** An identity of a user. */
export class LinkedIdentityDto {
  @ApiProperty({ example: 'https://idp.example.com/realms/main' })
  issuer!: string;

  @ApiProperty({ example: '248289761001' })
  subject!: string;

  @ApiProperty({ format: 'date-time' })
  createdAt!: string;

  /** `provisioned`: its first token created the user; `linked`: the operator linked it. */
  @ApiProperty({ enum: ['provisioned', 'linked'] })
  how!: 'provisioned' | 'linked';

  static from(identity: LinkedIdentity): LinkedIdentityDto {
    return { ...identity, createdAt: identity.createdAt.toISOString() };
  }
}
