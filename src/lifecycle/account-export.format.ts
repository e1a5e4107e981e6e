import type { ApiKeyDto } from '../auth/dto/api-key.dto';
import type { FORMAT, ManifestCollection } from '../data/transfer/transfer-format';
import type { FileDto } from '../files';
import type { LinkedIdentityDto } from '../identity';
import type { ProjectDto } from '../project/dto/project.dto';
import type { ProfileDto } from '../profile';
import type { WebhookDto } from '../webhooks/dto/webhook.dto';

/**
 * The account export (GET /me/export, GET /admin/users/{subject}/export): the export format of
 * GET /export (data/transfer/transfer-format.ts) — a manifest, records, an `end` — over a whole
 * account. The manifest describes every branch; each record names its kind in `type`, and its
 * object is the JSON the API answers for that resource elsewhere, so a reader needs no second
 * vocabulary. Item records are the namespace export's, with their `branch`.
 */
export interface AccountManifest {
  type: 'manifest';
  format: typeof FORMAT;
  exportedAt: string;
  account: { subject: string };
  /** The branches holding anything of the account, by name ('' first). */
  branches: BranchManifest[];
}

export interface BranchManifest {
  branch: string;
  /** The branch's newest event when the export began (GET /events?after=); null without a feed. */
  feedPosition: string | null;
  collections: ManifestCollection[];
}

/** A membership as the export lists it: GET /admin/users/{subject}'s team, and since when. */
export interface MembershipJson {
  teamId: string;
  name: string;
  role: string;
  createdAt: string;
}

/** The records of an account, in the order they are written (items follow them). */
export type AccountRecord =
  | { type: 'profile'; profile: ProfileDto }
  | { type: 'subProfile'; profile: ProfileDto }
  | { type: 'apiKey'; key: ApiKeyDto }
  | { type: 'identity'; identity: LinkedIdentityDto }
  | { type: 'project'; project: ProjectDto }
  | { type: 'membership'; membership: MembershipJson }
  | { type: 'webhook'; branch: string; webhook: WebhookDto }
  | { type: 'fileMetadata'; branch: string; file: FileDto };
