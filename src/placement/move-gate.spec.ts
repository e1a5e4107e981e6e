import { MoveGate } from './move-gate';
import type { MoveWriteMarkers } from './move-write-markers.repository';

/** Markers held in memory: which are under way, by target. */
class Markers {
  readonly live = new Map<string, string>();
  private next = 0;
  failEnd = false;

  begin(target: string): Promise<string> {
    const marker = `m${(this.next += 1)}`;
    this.live.set(marker, target);
    return Promise.resolve(marker);
  }

  end(marker: string): Promise<void> {
    if (this.failEnd) return Promise.reject(new Error('database down'));
    this.live.delete(marker);
    return Promise.resolve();
  }
}

type State = 'still' | 'copying' | 'paused';

/** A gate over named things whose state a test sets: cached, and afresh (what a move changed). */
class TestGate extends MoveGate<string, State> {
  readonly cached = new Map<string, State>();
  readonly fresh = new Map<string, State | Error>();
  freshReads = 0;

  constructor(markers: Markers) {
    super(markers as unknown as MoveWriteMarkers);
  }

  protected movingTarget(key: string): Promise<string | null> {
    return Promise.resolve((this.cached.get(key) ?? 'still') === 'still' ? null : `target:${key}`);
  }

  protected readNow(key: string): Promise<State> {
    this.freshReads += 1;
    const state = this.fresh.get(key) ?? this.cached.get(key) ?? 'still';
    return state instanceof Error ? Promise.reject(state) : Promise.resolve(state);
  }

  protected pausedIn(now: State): boolean {
    return now === 'paused';
  }

  protected refusal(key: string): Error {
    return new Error(`${key} is moving`);
  }
}

function gate(): { gate: TestGate; markers: Markers } {
  const markers = new Markers();
  return { gate: new TestGate(markers), markers };
}

describe('MoveGate', () => {
  it('lets a write through without a marker or a fresh read when its content is not being moved', async () => {
    const { gate: g, markers } = gate();
    expect(await g.enter('a')).toBeNull();
    expect(markers.live.size).toBe(0);
    expect(g.freshReads).toBe(0);
  });

  it('marks a write to content being moved under its target until it leaves', async () => {
    const { gate: g, markers } = gate();
    g.cached.set('a', 'copying');
    const marker = await g.enter('a');
    expect(marker).not.toBeNull();
    expect([...markers.live.values()]).toEqual(['target:a']);
    expect(g.freshReads).toBe(1);
    await g.leave(marker);
    expect(markers.live.size).toBe(0);
  });

  it('hands the write the state it read afresh after its marker, the one the write goes on with', async () => {
    const { gate: g, markers } = gate();
    // The cache says copying; the move has gone on since (the write must not use the cache).
    g.cached.set('a', 'copying');
    g.fresh.set('a', 'still');
    const passage = await g.pass('a');
    expect(passage).toEqual({ marker: expect.any(String) as string, now: 'still' });
    expect(g.freshReads).toBe(1);
    await g.leave(passage.marker);
    expect(markers.live.size).toBe(0);
    expect(await g.pass('b')).toEqual({ marker: null });
    expect(g.freshReads).toBe(1);
  });

  it('refuses with its error when the fresh read finds the writes paused, leaving no marker', async () => {
    const { gate: g, markers } = gate();
    // The cache still says copying; the move paused since.
    g.cached.set('a', 'copying');
    g.fresh.set('a', 'paused');
    await expect(g.enter('a')).rejects.toThrow('a is moving');
    expect(markers.live.size).toBe(0);
  });

  it('removes its marker when the fresh read fails, so that no move waits for it', async () => {
    const { gate: g, markers } = gate();
    g.cached.set('a', 'copying');
    g.fresh.set('a', new Error('database down'));
    await expect(g.enter('a')).rejects.toThrow('database down');
    expect(markers.live.size).toBe(0);
  });

  it('runs a write through it and removes the marker whether the write succeeded or failed', async () => {
    const { gate: g, markers } = gate();
    g.cached.set('a', 'copying');
    let underWay = 0;
    const written = await g.through('a', () => {
      underWay = markers.live.size;
      return Promise.resolve(42);
    });
    expect({ written, underWay, after: markers.live.size }).toEqual({
      written: 42,
      underWay: 1,
      after: 0,
    });
    await expect(g.through('a', () => Promise.reject(new Error('refused')))).rejects.toThrow(
      'refused',
    );
    expect(markers.live.size).toBe(0);
  });

  it('answers the write, not the marker, when the marker cannot be removed (it expires)', async () => {
    const { gate: g, markers } = gate();
    g.cached.set('a', 'copying');
    markers.failEnd = true;
    await expect(g.through('a', () => Promise.resolve('done'))).resolves.toBe('done');
    await expect(g.leave(null)).resolves.toBeUndefined();
  });
});
