/** Nearest-rank percentile of already sorted numbers. */
export function percentile(sorted, q) {
  if (sorted.length === 0) return NaN;
  const rank = Math.max(1, Math.ceil(q * sorted.length));
  return sorted[Math.min(rank, sorted.length) - 1];
}

export function median(values) {
  return percentile(
    [...values].sort((a, b) => a - b),
    0.5,
  );
}

/** The order of round `round`: the list rotated by one place per round. */
export function rotation(list, round) {
  const k = round % list.length;
  return [...list.slice(k), ...list.slice(0, k)];
}
