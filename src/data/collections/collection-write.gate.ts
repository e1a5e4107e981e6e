import { Injectable } from '@nestjs/common';
import type { Tenant } from '../../auth';
import { CollectionMovingError } from '../data.errors';
import {
  CollectionRegistryRepository,
  type RegisteredCollection,
} from './collection-registry.repository';
import { MoveGate, MoveWriteMarkers } from '../../placement';

/** A collection, as a write names it, with its registry entry as the write read it (cached). */
interface GatedCollection {
  tenant: Tenant;
  branch: string;
  name: string;
  entry: RegisteredCollection | null;
}

/**
 * The move gate (MoveGate) of a collection, which every write of its items, indexes and rules
 * passes once (a batch once for all its items), in the service that writes: the write reads the
 * registry entry once, from this instance's cache, and the gate decides from that entry. Outside
 * a move it costs nothing more. While the collection is being moved, the write marks itself under
 * the collection's registry id and reads the entry afresh; that fresh entry is the one the write
 * goes on with (its location changes when the move switches it). While its writes are paused,
 * 503 COLLECTION_MOVING (CollectionMover pauses, compares and switches). A collection that does
 * not exist yet has nothing to move: no marker.
 */
@Injectable()
export class CollectionWriteGate extends MoveGate<GatedCollection, RegisteredCollection | null> {
  constructor(
    private readonly registry: CollectionRegistryRepository,
    markers: MoveWriteMarkers,
  ) {
    super(markers);
  }

  /**
   * Runs `write` of the collection `name` with its registry entry (null: there is none), read
   * once and passed through the gate; the marker, if any, goes when the write is done or failed.
   */
  async write<T>(
    tenant: Tenant,
    branch: string,
    name: string,
    write: (entry: RegisteredCollection | null) => Promise<T>,
  ): Promise<T> {
    const cached = await this.registry.cached(tenant, branch, name);
    return this.through({ tenant, branch, name, entry: cached }, (passage) =>
      write(passage.marker === null ? cached : passage.now),
    );
  }

  protected movingTarget({ entry }: GatedCollection): string | null {
    return entry?.moving ? entry.id : null;
  }

  protected readNow({ tenant, branch, name }: GatedCollection) {
    return this.registry.find(tenant, branch, name, { fresh: true });
  }

  protected pausedIn(now: RegisteredCollection | null): boolean {
    return now?.moving?.phase === 'paused';
  }

  protected refusal({ name }: GatedCollection): Error {
    return new CollectionMovingError(name);
  }
}
