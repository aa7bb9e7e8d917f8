/**
 * Records stamped later than `now` (a clock that ran ahead, a forged line) count from `now`, when they
 * were read: a time in the future must not hold a window, a condition or an event watermark until then.
 * `onFuture` is told of each one, for its metric. Returns the input itself when nothing was moved. Pure.
 */
export function notAfter<T extends { readonly timestamp: number }>(
  items: readonly T[],
  now: number,
  onFuture: (item: T) => void = () => undefined,
): readonly T[] {
  let out: T[] | undefined;
  items.forEach((item, i) => {
    if (item.timestamp <= now) return;
    out ??= [...items];
    out[i] = { ...item, timestamp: now };
    onFuture(item);
  });
  return out ?? items;
}
