/**
 * Bounded concurrency for the actors' independent writes (creating a batch of pods, refreshing or
 * updating many pods): at most `limit` requests in flight, so 1,000 pods take a fraction of the
 * time of one-by-one writes without flooding the apiserver's inflight limit.
 */

/**
 * Runs `fn` over `items` with at most `limit` in flight and resolves each item's error (undefined
 * for success). With `stopOnError`, no new item starts after a failure (those items get no call
 * and no error).
 */
export async function pooled<T>(
  items: readonly T[],
  limit: number,
  fn: (item: T) => Promise<void>,
  stopOnError = false,
): Promise<unknown[]> {
  // Dense, so forEach/map visit every position.
  const errors: unknown[] = Array.from({ length: items.length }, () => undefined);
  let next = 0;
  let failed = false;
  const worker = async (): Promise<void> => {
    for (let i = next++; i < items.length && !(stopOnError && failed); i = next++) {
      try {
        await fn(items[i]!);
      } catch (err) {
        errors[i] = err ?? new Error('unknown error');
        failed = true;
      }
    }
  };
  await Promise.all(Array.from({ length: Math.max(1, Math.min(limit, items.length)) }, worker));
  return errors;
}

/** The first error in a pooled() result, if any. */
export function firstError(errors: readonly unknown[]): unknown {
  return errors.find((e) => e !== undefined);
}
