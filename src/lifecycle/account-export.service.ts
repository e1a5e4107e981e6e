import { Injectable } from '@nestjs/common';
import { readableBy, type Principal } from '../auth';
import { CollectionNotAllowedError } from '../auth/auth.errors';
import type { ApiKeyRecord } from '../auth/api-key.repository';
import { ApiKeyService } from '../auth/api-key.service';
import { ApiKeyDto } from '../auth/dto/api-key.dto';
import { ForbiddenError } from '../common/errors';
import type { Tenant } from '../common/tenancy/namespace';
import type { RegisteredCollection } from '../data/collections/collection-registry.repository';
import { NamespaceExport } from '../data/transfer/namespace-export';
import { FORMAT, RecordDigest } from '../data/transfer/transfer-format';
import { FileDto, FilesService, type FileRecord } from '../files';
import { IdentityLinks, LinkedIdentityDto, type LinkedIdentity } from '../identity';
import { ProjectDto } from '../project/dto/project.dto';
import { ProjectService } from '../project/project.service';
import type { Project } from '../project/project.types';
import { ProfileDto, ProfileService, type Profile } from '../profile';
import { MyTeamDto, TeamService } from '../team';
import type { MyMembership } from '../team/team.service';
import { WebhookDto } from '../webhooks/dto/webhook.dto';
import type { Webhook } from '../webhooks/webhook.schema';
import { WebhooksService } from '../webhooks/webhooks.service';
import type { AccountManifest, AccountRecord, BranchManifest } from './account-export.format';

type RootPrincipal = Extract<Principal, { kind: 'root' }>;
type BranchCollection = RegisteredCollection & { branch: string };

/** Everything of an account but its items, as read at one moment. */
interface AccountData {
  root: Profile;
  subProfiles: Profile[];
  keys: ApiKeyRecord[];
  identities: LinkedIdentity[];
  projects: Project[];
  memberships: MyMembership[];
  webhooks: Webhook[];
  collections: BranchCollection[];
  files: FileRecord[];
}

/**
 * A user's whole account as NDJSON, for data-access and portability requests: the root profile,
 * the sub profiles, key metadata, projects, team memberships, webhooks, file metadata and the
 * items of every collection in every branch — what an account erasure deletes. Files are listed
 * (GET /files/{id}'s JSON, with their branch), not their bytes: each downloads on its own. Never a secret: keys show their
 * metadata (ApiKeyDto), webhooks theirs (WebhookDto). The change feed is not exported: it is
 * derived from the data exported here and expires by itself; webhook deliveries and stored
 * idempotent responses are copies of it and of answers already given. Items stream as the client
 * reads them (NamespaceExport); the rest of an account is small and is read up front.
 */
@Injectable()
export class AccountExport {
  constructor(
    private readonly profiles: ProfileService,
    private readonly keys: ApiKeyService,
    private readonly identities: IdentityLinks,
    private readonly projects: ProjectService,
    private readonly teams: TeamService,
    private readonly webhooks: WebhooksService,
    private readonly exporter: NamespaceExport,
    private readonly files: FilesService,
  ) {}

  /**
   * GET /me/export: the caller's own account, for a root key not bound to a branch only (an
   * account spans every branch; a bound key is confined to its own).
   */
  async *ofOwnAccount(principal: RootPrincipal): AsyncGenerator<string> {
    if (principal.boundBranch !== null)
      throw new ForbiddenError(
        `The API key is bound to branch '${principal.boundBranch}'; exporting the account needs an unbound root key.`,
      );
    // The account's export holds every collection of every branch: not for a key limited to some.
    if (readableBy(principal)) throw new CollectionNotAllowedError(null, 'read');
    yield* this.lines(principal.subject);
  }

  /**
   * The export's lines: the manifest, the account's records, the items of every branch (by
   * branch, collection, then `_id`) and the end line over everything between. An unknown subject
   * fails with the first line (404 PROFILE_NOT_FOUND).
   */
  async *lines(subject: string): AsyncGenerator<string> {
    const tenant: Tenant = { kind: 'user', id: subject };
    // The feed positions are read before the data they cover, so that GET /events?after= gives
    // every change the export may have missed; a first read tells which branches there are.
    const positions = new Map<string, string | null>();
    const learnBranches = async (data: AccountData): Promise<void> => {
      for (const branch of branchesOf(data))
        if (!positions.has(branch))
          positions.set(branch, await this.exporter.feedPosition({ tenant, branch }));
    };
    await learnBranches(await this.read(subject));
    const account = await this.read(subject);
    // A branch begun in between gets its position now.
    await learnBranches(account);

    const byBranch = collectionsByBranch(account.collections);
    const branches: BranchManifest[] = [];
    for (const branch of [...positions.keys()].sort())
      branches.push({
        branch,
        feedPosition: positions.get(branch) ?? null,
        collections: await this.exporter.describe(byBranch.get(branch) ?? [], null),
      });
    const manifest: AccountManifest = {
      type: 'manifest',
      format: FORMAT,
      exportedAt: new Date().toISOString(),
      account: { subject },
      branches,
    };
    yield JSON.stringify(manifest);

    const digest = new RecordDigest();
    for (const record of recordsOf(account)) {
      const line = JSON.stringify(record);
      digest.add(line);
      yield line;
    }
    for (const { branch } of branches)
      for (const entry of byBranch.get(branch) ?? [])
        for await (const line of this.exporter.itemLines(entry, null, null, branch)) {
          digest.add(line);
          yield line;
        }
    yield JSON.stringify(digest.end());
  }

  private async read(subject: string): Promise<AccountData> {
    const tenant: Tenant = { kind: 'user', id: subject };
    const root = await this.profiles.getRoot(subject);
    const [subProfiles, keys, identities, projects, memberships, webhooks, collections, files] =
      await Promise.all([
        this.profiles.subProfilesInEveryBranch(subject),
        this.keys.list({ subject, boundBranch: null }),
        this.identities.listOf(subject),
        this.projects.listAllOf(tenant),
        this.teams.membershipsOf(subject),
        this.webhooks.listOfTenant(tenant),
        this.exporter.inEveryBranch(tenant),
        this.files.storedOfTenant(tenant),
      ]);
    return {
      root,
      subProfiles,
      keys,
      identities,
      projects,
      memberships,
      webhooks,
      collections,
      files,
    };
  }
}

/** The branches holding anything of the account: the standard one (its root profile) and more. */
function branchesOf(data: AccountData): Set<string> {
  return new Set([
    '',
    ...data.subProfiles.map((p) => p.branch),
    ...data.projects.map((p) => p.branch),
    ...data.webhooks.map((w) => w.branch),
    ...data.collections.map((c) => c.branch),
    ...data.files.map((f) => f.namespace.branch),
  ]);
}

/** The collections of each branch, by name. */
function collectionsByBranch(collections: BranchCollection[]): Map<string, BranchCollection[]> {
  const byBranch = new Map<string, BranchCollection[]>();
  for (const entry of [...collections].sort((a, b) => compare(a.name, b.name))) {
    const entries = byBranch.get(entry.branch) ?? [];
    entries.push(entry);
    byBranch.set(entry.branch, entries);
  }
  return byBranch;
}

/** The records of the account, in the export's order, as the API shows each resource. */
function recordsOf(data: AccountData): AccountRecord[] {
  return [
    { type: 'profile', profile: ProfileDto.from(data.root) },
    ...data.subProfiles.map((p) => ({ type: 'subProfile', profile: ProfileDto.from(p) }) as const),
    ...data.keys.map((k) => ({ type: 'apiKey', key: ApiKeyDto.from(k) }) as const),
    ...data.identities.map(
      (i) => ({ type: 'identity', identity: LinkedIdentityDto.from(i) }) as const,
    ),
    ...data.projects.map((p) => ({ type: 'project', project: ProjectDto.from(p) }) as const),
    ...data.memberships.map(
      (m) =>
        ({
          type: 'membership',
          membership: { ...MyTeamDto.from(m), createdAt: m.createdAt.toISOString() },
        }) as const,
    ),
    ...data.webhooks.map(
      (w) => ({ type: 'webhook', branch: w.branch, webhook: WebhookDto.from(w) }) as const,
    ),
    ...data.files.map(
      (f) => ({ type: 'fileMetadata', branch: f.namespace.branch, file: FileDto.from(f) }) as const,
    ),
  ];
}

/** Code-unit order, as MongoDB sorts strings (localeCompare would not). */
function compare(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}
