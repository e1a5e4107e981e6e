import { Types } from 'mongoose';
import { ValidationFailedError } from '../common/errors';
import type { IntentRef } from './event-intents.repository';
import type { RecordedChange } from './event-scope';
import { OpenFeedChange, type FeedChangeParts } from './feed-change';

const change: RecordedChange = {
  resource: 'item',
  type: 'created',
  collection: 'c',
  key: 'i1',
  owner: null,
  data: { _id: 'i1' },
};

/** A change over recording parts: what each settling did, in order. */
function open(appendFails = false) {
  const intent: IntentRef = { id: new Types.ObjectId(), cluster: null };
  const steps: string[] = [];
  const warnings: unknown[] = [];
  const parts: FeedChangeParts = {
    append: (changes, id) => {
      steps.push(`append ${changes.length} ${id === intent.id.toHexString() ? 'of intent' : id}`);
      return appendFails ? Promise.reject(new Error('down')) : Promise.resolve();
    },
    close: () => void steps.push('close'),
    discard: () => {
      steps.push('discard');
      return Promise.resolve();
    },
    leave: () => {
      steps.push('leave');
      return Promise.resolve();
    },
    logger: { warn: (...args: unknown[]) => warnings.push(args) } as never,
  };
  return { feed: new OpenFeedChange(intent, parts), steps, warnings };
}

describe('OpenFeedChange', () => {
  it('commit appends the events under the intent, closes it and leaves the gate, once', async () => {
    const { feed, steps } = open();
    await feed.commit([change, change]);
    await feed.commit([change]);
    await feed.abandon();
    await feed.failed(new Error('late'));
    expect(steps).toEqual(['append 2 of intent', 'close', 'leave']);
  });

  it('keeps the intent for the reconciler when the events cannot be appended', async () => {
    const { feed, steps, warnings } = open(true);
    await expect(feed.commit([change])).resolves.toBeUndefined();
    expect(steps).toEqual(['append 1 of intent', 'leave']);
    expect(warnings).toHaveLength(1);
  });

  it('keeps the intent for the reconciler when the events cannot be built', async () => {
    const { feed, steps, warnings } = open();
    const unbuildable = (): RecordedChange[] => {
      throw new Error('bad item');
    };
    await expect(feed.commit(unbuildable)).resolves.toBeUndefined();
    expect(steps).toEqual(['leave']);
    expect(warnings).toHaveLength(1);
  });

  it('abandon discards the intent and leaves the gate', async () => {
    const { feed, steps } = open();
    await feed.abandon();
    await feed.commit([change]);
    expect(steps).toEqual(['discard', 'leave']);
  });

  it("a rule's refusal discards the intent; any other failure keeps it for the reconciler", async () => {
    const refused = open();
    await refused.feed.failed(new ValidationFailedError([{ field: 'x', message: 'refused' }]));
    expect(refused.steps).toEqual(['discard', 'leave']);
    const broken = open();
    await broken.feed.failed(new Error('connection reset'));
    await broken.feed.commit([change]);
    expect(broken.steps).toEqual(['leave']);
  });
});
