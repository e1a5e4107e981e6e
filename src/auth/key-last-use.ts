import { Inject, Injectable, Logger } from '@nestjs/common';
import { GroupCommit } from '../common/batching/group-commit';
import { APP_CONFIG, type AppConfig } from '../config';
import { ApiKeyRepository, type KeyUse } from './api-key.repository';

/**
 * Writes keys' `lastUsedAt` off the request's path: a key's first use on this instance, then at
 * most one use per key per API_KEY_LAST_USED_INTERVAL_MS. `seen` is synchronous and never waits
 * for the database; the uses due go to one group commit, so the uses of many keys that come
 * together share one command. A failed write is logged and dropped: the next use after the
 * interval writes again.
 */
@Injectable()
export class KeyLastUse {
  private readonly logger = new Logger(KeyLastUse.name);
  /** Key id → when this instance last wrote its use (Date ms). */
  private readonly written = new Map<string, number>();
  private readonly intervalMs: number;
  private readonly writes: GroupCommit<KeyUse>;

  constructor(
    private readonly keys: ApiKeyRepository,
    @Inject(APP_CONFIG) config: AppConfig,
  ) {
    this.intervalMs = config.apiKeys.lastUsedIntervalMs;
    this.writes = new GroupCommit<KeyUse>(
      async (uses) => {
        await this.keys.recordUses(uses);
        return uses.map(() => undefined as void);
      },
      { gather: true },
    );
  }

  /** A request authenticated with the key at `at`. */
  seen(keyId: string, at: Date): void {
    const now = at.getTime();
    const last = this.written.get(keyId);
    if (last !== undefined && now - last < this.intervalMs && now >= last) return;
    this.written.set(keyId, now);
    this.forgetOld(now);
    this.writes.add({ id: keyId, at }).catch((error: unknown) => {
      this.logger.warn(`Could not record the last use of API key ${keyId}: ${String(error)}`);
    });
  }

  /** Keeps the memory bounded by the keys used within one interval. */
  private forgetOld(now: number): void {
    if (this.written.size <= 1_000) return;
    for (const [id, last] of this.written) {
      if (now - last >= this.intervalMs) this.written.delete(id);
    }
  }
}
