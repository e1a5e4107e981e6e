import { Inject, Injectable } from '@nestjs/common';
import { KeyedGroupCommits } from '../common/batching/group-commit';
import { APP_CONFIG, type AppConfig } from '../config';
import { ApiKeyRepository, type ApiKeyRecord } from './api-key.repository';

/**
 * Digests in one lookup at most. An address that keeps more keys waiting than this is served
 * first come, first served over several intervals; nothing is refused for want of room.
 */
const LOOKUP_MAX_DIGESTS = 1_000;

/**
 * Key lookups for client addresses over their failed-authentication budget. A valid key from
 * such an address must still work — other clients can share the address — but each wrong key
 * would cost a lookup, so the keys of one address that are not in this instance's cache are
 * looked up together: at most one command per AUTH_FAILURE_LOOKUP_INTERVAL_MS per address on
 * this instance, however many keys the address sends. Only addresses with a lookup in the last
 * interval are held in memory.
 */
@Injectable()
export class OverBudgetKeyLookups {
  /** Keyed by client address: one group commit per address with a lookup in the last interval. */
  private readonly lookups: KeyedGroupCommits<string, string, ApiKeyRecord | null>;

  constructor(
    private readonly keys: ApiKeyRepository,
    @Inject(APP_CONFIG) config: AppConfig,
  ) {
    this.lookups = new KeyedGroupCommits((_address, digests) => keys.findManyByDigest(digests), {
      max: LOOKUP_MAX_DIGESTS,
      spacingMs: config.limits.authFailureLookupIntervalMs,
    });
  }

  /** The key of `digest` (cached, else in the address's next lookup), or null when none exists. */
  async find(address: string, digest: string): Promise<ApiKeyRecord | null> {
    return this.keys.findCached(digest) ?? this.lookups.add(address, digest);
  }
}
