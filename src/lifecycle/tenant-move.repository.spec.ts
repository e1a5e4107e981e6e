import type { Model } from 'mongoose';
import { TenantMoveRepository } from './tenant-move.repository';
import type { TenantMoveDocument, TenantMoveRunDocument } from './tenant-move.schema';

const ID = '665f1c2a9b1e8a0012345678';

/** A model whose updates stay open until the test lets each go, recording how many overlap. */
function heldModel() {
  const pending: (() => void)[] = [];
  let open = 0;
  let mostOpen = 0;
  const updates: unknown[] = [];
  const model = {
    updateOne: (_filter: unknown, update: unknown) => ({
      exec: () =>
        new Promise((resolve) => {
          open += 1;
          mostOpen = Math.max(mostOpen, open);
          updates.push(update);
          pending.push(() => {
            open -= 1;
            resolve({ matchedCount: 1 });
          });
        }),
    }),
  };
  return {
    model: model as unknown as Model<TenantMoveDocument>,
    release: () => pending.shift()?.(),
    pending: () => pending.length,
    mostOpen: () => mostOpen,
    updates,
  };
}

const settle = () => new Promise((resolve) => setImmediate(resolve));

describe('TenantMoveRepository', () => {
  it("sends this instance's writes of one move one at a time: a lease renewal waits for the runner's counter", async () => {
    const held = heldModel();
    const repository = new TenantMoveRepository(
      held.model,
      {} as unknown as Model<TenantMoveRunDocument>,
    );
    const counted = repository.update(ID, {}, { collectionsCopied: 1 });
    const renewed = repository.renewLease(ID, 1, new Date());
    const ended = repository.end(ID, 'done', new Date());
    await settle();
    // The counter's update is at the database; the renewal and the end have not been sent.
    expect(held.pending()).toBe(1);
    held.release();
    await counted;
    await settle();
    expect(held.pending()).toBe(1);
    held.release();
    await expect(renewed).resolves.toBe(true);
    await settle();
    held.release();
    await ended;
    expect(held.mostOpen()).toBe(1);
    expect(held.updates).toEqual([
      { $set: {}, $inc: { collectionsCopied: 1 } },
      { $set: { leaseUntil: expect.any(Date) } },
      expect.objectContaining({ $set: expect.objectContaining({ status: 'done' }) }),
    ]);
  });

  it('writes different moves side by side', async () => {
    const held = heldModel();
    const repository = new TenantMoveRepository(
      held.model,
      {} as unknown as Model<TenantMoveRunDocument>,
    );
    const one = repository.update(ID, { phase: 'copying' });
    const other = repository.update('665f1c2a9b1e8a0012345679', { phase: 'copying' });
    await settle();
    expect(held.pending()).toBe(2);
    held.release();
    held.release();
    await Promise.all([one, other]);
  });
});
