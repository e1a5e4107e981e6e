import { Injectable, type OnModuleInit } from '@nestjs/common';
import { InjectModel } from '@nestjs/mongoose';
import { Types, type Model } from 'mongoose';
import { isDuplicateKeyError } from '../common/errors';
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

  private static key(tenant: string, branch: string, name: string): string {
    return `${tenant}\u0000${branch}\u0000${name}`;
  }

  private remember(tenant: string, branch: string, entry: RegisteredCollection): void {
    if (this.cache.size >= CACHE_LIMIT) this.cache.clear();
    this.cache.set(CollectionRegistryRepository.key(tenant, branch, entry.name), entry);
  }

  async find(tenant: string, branch: string, name: string): Promise<RegisteredCollection | null> {
    const cached = this.cache.get(CollectionRegistryRepository.key(tenant, branch, name));
    if (cached) return cached;
    const doc = await this.registry
      .findOne({ tenant, branch, name })
      .lean<CollectionRegistryDocument>()
      .exec();
    if (!doc) return null;
    const entry = toEntry(doc);
    this.remember(tenant, branch, entry);
    return entry;
  }

  async countFor(tenant: string, branch: string): Promise<number> {
    return this.registry.countDocuments({ tenant, branch }).exec();
  }

  async listFor(tenant: string, branch: string): Promise<RegisteredCollection[]> {
    const docs = await this.registry
      .find({ tenant, branch })
      .sort({ name: 1 })
      .lean<CollectionRegistryDocument[]>()
      .exec();
    return docs.map(toEntry);
  }

  /**
   * Registers a collection and returns it; when a concurrent request registered the same name
   * first, the unique index refuses this insert and the existing entry is returned.
   */
  async register(tenant: string, branch: string, name: string): Promise<RegisteredCollection> {
    const _id = new Types.ObjectId();
    try {
      const created = await this.registry.create({
        _id,
        tenant,
        branch,
        name,
        physical: `d_${_id.toHexString()}`,
      });
      const entry = toEntry(created.toObject<CollectionRegistryDocument>());
      this.remember(tenant, branch, entry);
      return entry;
    } catch (error) {
      if (!isDuplicateKeyError(error)) throw error;
      const existing = await this.find(tenant, branch, name);
      if (!existing) throw error;
      return existing;
    }
  }
}
