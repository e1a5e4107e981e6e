/**
 * The deployments that hold tenant data (DATA_CLUSTERS). A tenant's collections live in a
 * database of its own on one of them (src/placement); the main database keeps the control plane.
 */
export interface DataClusterConfig {
  name: string;
  /** Unset only for the implicit `default` cluster: the main connection. */
  uri?: string;
  region: string;
  /** Whether new tenants may be placed here (false: the cluster is being retired). */
  open: boolean;
}

/** The cluster a deployment without DATA_CLUSTERS has: its main connection. */
export const DEFAULT_CLUSTER: DataClusterConfig = {
  name: 'default',
  region: 'default',
  open: true,
};

/** Cluster and region names: lower-case letters, digits and `-`, at most 32 characters. */
export const CLUSTER_NAME = /^[a-z0-9][a-z0-9-]{0,31}$/;
const MONGODB_URI = /^mongodb(\+srv)?:\/\/.+/;
const MAX_CLUSTERS = 64;
const KEYS = new Set(['uri', 'region', 'open']);

/** DATA_CLUSTERS read and checked: the clusters, or every problem found in it. */
export function parseDataClusters(
  text: string | undefined,
): { clusters: DataClusterConfig[] } | { problems: string[] } {
  if (text === undefined) return { clusters: [DEFAULT_CLUSTER] };
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    return { problems: ['DATA_CLUSTERS must be JSON: {"<name>": {"uri": …, "region": …}}'] };
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) {
    return { problems: ['DATA_CLUSTERS must be a JSON object of clusters by name'] };
  }
  const entries = Object.entries(parsed);
  const problems: string[] = [];
  if (entries.length === 0 || entries.length > MAX_CLUSTERS) {
    problems.push(`DATA_CLUSTERS must name 1-${MAX_CLUSTERS} clusters`);
  }
  const clusters: DataClusterConfig[] = [];
  for (const [name, value] of entries) {
    const where = `DATA_CLUSTERS.${name}`;
    if (!CLUSTER_NAME.test(name)) {
      problems.push(
        `${where}: a cluster name is 1-32 of a-z 0-9 - (starting with a letter or digit)`,
      );
    }
    if (typeof value !== 'object' || value === null || Array.isArray(value)) {
      problems.push(`${where} must be an object {"uri", "region", "open"}`);
      continue;
    }
    const cluster = value as Record<string, unknown>;
    const unknown = Object.keys(cluster).filter((key) => !KEYS.has(key));
    if (unknown.length > 0) problems.push(`${where}: unknown setting ${unknown.join(', ')}`);
    const { uri, region, open = true } = cluster;
    if (typeof uri !== 'string' || !MONGODB_URI.test(uri)) {
      problems.push(`${where}.uri must be a mongodb:// or mongodb+srv:// URI`);
    }
    if (typeof region !== 'string' || !CLUSTER_NAME.test(region)) {
      problems.push(`${where}.region must be 1-32 of a-z 0-9 - (starting with a letter or digit)`);
    }
    if (typeof open !== 'boolean') problems.push(`${where}.open must be true or false`);
    clusters.push({ name, uri: uri as string, region: region as string, open: open === true });
  }
  if (problems.length === 0 && !clusters.some((cluster) => cluster.open)) {
    problems.push('DATA_CLUSTERS must have an open cluster: new tenants are placed on one');
  }
  return problems.length > 0 ? { problems } : { clusters };
}
