/**
 * Waits for every promise, even when some fail, then throws the first failure (in the order
 * given): work spread over independent places (clusters) where one that is down must neither
 * stop nor hold up the others.
 */
export async function allSettledOrThrow<T>(work: Promise<T>[]): Promise<T[]> {
  const results = await Promise.allSettled(work);
  const failed = results.find((r): r is PromiseRejectedResult => r.status === 'rejected');
  if (failed) throw failed.reason;
  return results.map((r) => (r as PromiseFulfilledResult<T>).value);
}
