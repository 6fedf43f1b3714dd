/**
 * Runs `work` over `items` with at most `limit` in flight (at least one), in item order,
 * launching none once `more()` says no (a time budget running out); returns how many were
 * launched. The first failure rejects the whole; items not yet started are then not started.
 */
export async function forEachBounded<T>(items: readonly T[], limit: number, work: (item: T) => Promise<void>, more: () => boolean = () => true): Promise<number> {
  let next = 0;
  const worker = async (): Promise<void> => {
    while (next < items.length && more()) {
      const item = items[next] as T;
      next += 1;
      await work(item);
    }
  };
  await Promise.all(Array.from({ length: Math.max(1, Math.min(limit, items.length)) }, worker));
  return next;
}
