import type { AppConfig } from '../config';
import { MoveGivenUpError } from '../placement';
import { MoveHold } from './tenant-move-hold';
import type { TenantMove, TenantMoveRepository } from './tenant-move.repository';

/** MoveHold's bounds: a pass reporting progress past its move's deadline gives up there. */
const config = {
  clusters: {
    moveLeaseMs: 30_000,
    moveMaxWritePauseMs: 5_000,
    moveStallMs: 300_000,
    moveBaseTimeMs: 120_000,
    moveTimePer1000ItemsMs: 60_000,
  },
  lifecycle: { dropGraceMs: 120_000 },
} as unknown as AppConfig;

function moveWith(deadlineAt: Date): TenantMove {
  const now = new Date();
  return {
    id: 'm1',
    startedAt: now,
    progressAt: now,
    leaseUntil: new Date(now.getTime() + 30_000),
    deadlineAt,
  } as unknown as TenantMove;
}

describe('MoveHold', () => {
  const updates: unknown[] = [];
  const moves = {
    update: (...args: unknown[]) => {
      updates.push(args);
      return Promise.resolve();
    },
  } as unknown as TenantMoveRepository;
  const hold = new MoveHold(moves, config, () => false);

  it('records a pass’s progress before the deadline', async () => {
    await hold.report(moveWith(new Date(Date.now() + 60_000)), 2, 400);
    expect(updates).toHaveLength(1);
  });

  it('gives up a pass that reports progress past the deadline, without recording it', async () => {
    updates.length = 0;
    const late = moveWith(new Date(Date.now() - 1));
    await expect(hold.report(late, 2, 400)).rejects.toBeInstanceOf(MoveGivenUpError);
    await expect(hold.report(late, 2, 400)).rejects.toThrow(/deadline/);
    expect(updates).toHaveLength(0);
  });
});
