import { DEFAULT_CLUSTER, parseDataClusters } from './data-clusters';

const problemsOf = (text: string): string[] => {
  const parsed = parseDataClusters(text);
  return 'problems' in parsed ? parsed.problems : [];
};

describe('DATA_CLUSTERS', () => {
  it('is one default cluster on the main connection when unset', () => {
    expect(parseDataClusters(undefined)).toEqual({ clusters: [DEFAULT_CLUSTER] });
    expect(DEFAULT_CLUSTER.uri).toBeUndefined();
  });

  it('reads clusters by name, open unless said otherwise', () => {
    const parsed = parseDataClusters(
      JSON.stringify({
        'eu-1': { uri: 'mongodb://eu-1:27017', region: 'eu' },
        'us-1': { uri: 'mongodb+srv://us-1.example.com', region: 'us', open: false },
      }),
    );
    expect(parsed).toEqual({
      clusters: [
        { name: 'eu-1', uri: 'mongodb://eu-1:27017', region: 'eu', open: true },
        { name: 'us-1', uri: 'mongodb+srv://us-1.example.com', region: 'us', open: false },
      ],
    });
  });

  it('reports every problem at once', () => {
    expect(problemsOf('{')).toEqual([expect.stringContaining('must be JSON')]);
    expect(problemsOf('[]')).toEqual([expect.stringContaining('JSON object')]);
    expect(problemsOf('{}')).toEqual([expect.stringContaining('1-64 clusters')]);
    const problems = problemsOf(
      JSON.stringify({
        Bad_Name: { uri: 'http://x', region: 'EU', open: 'yes', pool: 3 },
        ok: null,
      }),
    );
    expect(problems).toEqual([
      expect.stringContaining('DATA_CLUSTERS.Bad_Name: a cluster name'),
      'DATA_CLUSTERS.Bad_Name: unknown setting pool',
      'DATA_CLUSTERS.Bad_Name.uri must be a mongodb:// or mongodb+srv:// URI',
      expect.stringContaining('DATA_CLUSTERS.Bad_Name.region must be'),
      'DATA_CLUSTERS.Bad_Name.open must be true or false',
      expect.stringContaining('DATA_CLUSTERS.ok must be an object'),
    ]);
  });

  it('needs an open cluster, since new tenants are placed on one', () => {
    expect(
      problemsOf(JSON.stringify({ a: { uri: 'mongodb://a', region: 'eu', open: false } })),
    ).toEqual([expect.stringContaining('must have an open cluster')]);
  });
});
