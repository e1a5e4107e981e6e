import { Injectable, type OnModuleInit } from '@nestjs/common';
import { InjectModel } from '@nestjs/mongoose';
import { Types, type Model } from 'mongoose';
import type { Tenant } from '../auth';
import { DUPLICATE, orDuplicate } from '../common/mongo/duplicate';
import { claimSlot } from '../common/mongo/slots';
import { CollectionRegistryDocument } from './collection-registry.schema';

export interface RegisteredCollection {
  name: string;
  physical: string;
  createdAt: Date;
}

/** Registry entries never change once written, so a positive cache is always right. */
const CACHE_LIMIT = 10_000;

function toEntry(doc: CollectionRegistryDocument): RegisteredCollection {
  return { name: doc.name, physical: doc.physical, createdAt: doc.createdAt };
}

@Injectable()
export class CollectionRegistryRepository implements OnModuleInit {
  private readonly cache = new Map<string, RegisteredCollection>();

  constructor(
    @InjectModel(CollectionRegistryDocument.name)
    private readonly registry: Model<CollectionRegistryDocument>,
  ) {}

  async onModuleInit(): Promise<void> {
    await this.registry.init();
  }

  private static key(tenant: Tenant, branch: string, name: string): string {
    return `${tenant.kind}\u0000${tenant.id}\u0000${branch}\u0000${name}`;
  }

  /** The filter of one namespace: the tenant's kind is always part of it. */
  private static scope(tenant: Tenant, branch: string) {
    return { tenantKind: tenant.kind, tenant: tenant.id, branch };
  }

  private remember(tenant: Tenant, branch: string, entry: RegisteredCollection): void {
    if (this.cache.size >= CACHE_LIMIT) this.cache.clear();
    this.cache.set(CollectionRegistryRepository.key(tenant, branch, entry.name), entry);
  }

  async find(tenant: Tenant, branch: string, name: string): Promise<RegisteredCollection | null> {
    const cached = this.cache.get(CollectionRegistryRepository.key(tenant, branch, name));
    if (cached) return cached;
    const doc = await this.registry
      .findOne({ ...CollectionRegistryRepository.scope(tenant, branch), name })
      .lean<CollectionRegistryDocument>()
      .exec();
    if (!doc) return null;
    const entry = toEntry(doc);
    this.remember(tenant, branch, entry);
    return entry;
  }

  async countFor(tenant: Tenant, branch: string): Promise<number> {
    return this.registry.countDocuments(CollectionRegistryRepository.scope(tenant, branch)).exec();
  }

  async listFor(tenant: Tenant, branch: string): Promise<RegisteredCollection[]> {
    const docs = await this.registry
      .find(CollectionRegistryRepository.scope(tenant, branch))
      .sort({ name: 1 })
      .lean<CollectionRegistryDocument[]>()
      .exec();
    return docs.map(toEntry);
  }

  /**
   * Registers a collection in the next free slot and returns it; null when the namespace has
   * `max` collections. A unique index on the name makes concurrent first writes of one name agree
   * on one entry; a unique index on the slot makes concurrent creates of different names queue
   * for the remaining places (claimSlot), so the quota is never exceeded. Collections are never
   * removed, so the slots of a namespace are 0..n-1 and their number is the first free one.
   */
  async register(
    tenant: Tenant,
    branch: string,
    name: string,
    max: number,
  ): Promise<RegisteredCollection | null> {
    const entry = await claimSlot<RegisteredCollection>(
      {
        firstFree: () => this.countFor(tenant, branch),
        take: async (slot) => {
          const _id = new Types.ObjectId();
          const created = await orDuplicate(() =>
            this.registry.create({
              _id,
              ...CollectionRegistryRepository.scope(tenant, branch),
              name,
              slot,
              physical: `d_${_id.toHexString()}`,
            }),
          );
          if (created === DUPLICATE) {
            // The name was registered concurrently, or the slot was taken: which one is not in
            // the error on every server, so look.
            return (await this.find(tenant, branch, name)) ?? DUPLICATE;
          }
          const registered = toEntry(created.toObject<CollectionRegistryDocument>());
          this.remember(tenant, branch, registered);
          return registered;
        },
      },
      max,
    );
    // A concurrent request may have registered this very name in the last place.
    return entry ?? this.find(tenant, branch, name);
  }
}
