import type { AppConfig, DataClusterConfig } from '../config';
import type { DataClusters } from './data-clusters';
import { NoOpenClusterError, UnknownRegionError } from './placement.errors';
import type { TenantPlacementsRepository } from './tenant-placements.repository';
import { TenantPlacements, UnconfiguredClusterError } from './tenant-placements.service';

const CLUSTERS: DataClusterConfig[] = [
  { name: 'eu-1', uri: 'mongodb://eu-1', region: 'eu', open: true },
  { name: 'eu-2', uri: 'mongodb://eu-2', region: 'eu', open: true },
  { name: 'us-1', uri: 'mongodb://us-1', region: 'us', open: true },
  { name: 'us-old', uri: 'mongodb://us-old', region: 'us', open: false },
  { name: 'ap-old', uri: 'mongodb://ap-old', region: 'ap', open: false },
];

/** The rule alone, over tenant counts held here; placements themselves are tested end to end. */
function placementsWith(counts: Record<string, number>, inUse: string[] = []): TenantPlacements {
  const repository = {
    countOn: (cluster: string) => Promise.resolve(counts[cluster] ?? 0),
    clustersInUse: () => Promise.resolve(inUse),
  } as unknown as TenantPlacementsRepository;
  const clusters = {
    list: () => CLUSTERS,
    get: (name: string) => CLUSTERS.find((cluster) => cluster.name === name),
  } as unknown as DataClusters;
  const config = {
    lifecycle: { registryCacheMs: 0, registryCacheSize: 1 },
    database: { dbName: 'app' },
  } as AppConfig;
  return new TenantPlacements(repository, clusters, config);
}

describe('TenantPlacements.choose', () => {
  it('takes the open cluster with the fewest tenants, never a closed one', async () => {
    const placements = placementsWith({
      'eu-1': 5,
      'eu-2': 3,
      'us-1': 4,
      'us-old': 0,
      'ap-old': 0,
    });
    expect((await placements.choose()).name).toBe('eu-2');
  });

  it('breaks ties at random among the fewest', async () => {
    const placements = placementsWith({ 'eu-1': 2, 'eu-2': 2, 'us-1': 2 });
    const chosen = new Set<string>();
    // 3^-200 is the chance that one of three is never drawn.
    for (let i = 0; i < 200; i += 1) chosen.add((await placements.choose()).name);
    expect([...chosen].sort()).toEqual(['eu-1', 'eu-2', 'us-1']);
  });

  it('keeps to the requested region', async () => {
    const placements = placementsWith({ 'eu-1': 9, 'eu-2': 9, 'us-1': 50 });
    expect((await placements.choose('us')).name).toBe('us-1');
    expect(['eu-1', 'eu-2']).toContain((await placements.choose('eu')).name);
  });

  it('refuses a region no cluster has, and one whose clusters are all closed', async () => {
    const placements = placementsWith({});
    await expect(placements.choose('mars')).rejects.toBeInstanceOf(UnknownRegionError);
    await expect(placements.choose('ap')).rejects.toBeInstanceOf(NoOpenClusterError);
  });
});

describe('TenantPlacements at start', () => {
  it('refuses placements on a cluster that is not configured, naming it', async () => {
    await expect(placementsWith({}, ['eu-1', 'gone', 'also-gone']).onModuleInit()).rejects.toThrow(
      new UnconfiguredClusterError(['also-gone', 'gone']),
    );
    await expect(placementsWith({}, ['eu-1', 'us-old']).onModuleInit()).resolves.toBeUndefined();
  });
});
