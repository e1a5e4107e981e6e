import type { AppConfig } from '../config';
import { MoveGivenUpError } from '../placement';
import { MoveHold } from './tenant-move-hold';
import type { TenantMove, TenantMoveRepository } from './tenant-move.repository';

/**
 * MoveHold's bounds: a pass reporting progress past its move's deadline gives up there; a move
 * without progress for MOVE_STALL_MS is given up, and the heartbeat stops holding it.
 */
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

  it('gives up a move that made no progress for MOVE_STALL_MS, naming when it last did', () => {
    const stalled = moveWith(new Date(Date.now() + 600_000));
    stalled.progressAt = new Date(Date.now() - config.clusters.moveStallMs - 1);
    expect(() => hold.checkBounds(stalled)).toThrow(MoveGivenUpError);
    expect(() => hold.checkBounds(stalled)).toThrow(
      new RegExp(`no progress since ${stalled.progressAt.toISOString()}.*MOVE_STALL_MS`),
    );
    const moving = moveWith(new Date(Date.now() + 600_000));
    expect(() => hold.checkBounds(moving)).not.toThrow();
  });

  it('stops renewing the lease of a stalled move, so that another instance takes it over', () => {
    jest.useFakeTimers();
    try {
      const renewals: unknown[] = [];
      const repository = {
        renewLease: (...args: unknown[]) => {
          renewals.push(args);
          return Promise.resolve(true);
        },
      } as unknown as TenantMoveRepository;
      const beating = new MoveHold(repository, config, () => false);
      const live = moveWith(new Date(Date.now() + 600_000));
      const stopLive = beating.heartbeat(live);
      jest.advanceTimersByTime(config.clusters.moveLeaseMs / 4);
      stopLive();
      expect(renewals).toHaveLength(1);

      const stalled = moveWith(new Date(Date.now() + 600_000));
      stalled.progressAt = new Date(Date.now() - config.clusters.moveStallMs - 1);
      const stopStalled = beating.heartbeat(stalled);
      jest.advanceTimersByTime(config.clusters.moveLeaseMs);
      stopStalled();
      expect(renewals).toHaveLength(1);
    } finally {
      jest.useRealTimers();
    }
  });
});
