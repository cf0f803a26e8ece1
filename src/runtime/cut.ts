// Cutting a list into runs bounded by size (and count), in order: each run takes items while it
// stays within the bounds, and an item larger than the bound goes alone. Bulk records and batched
// replies are cut so.

export function cutBySize<T>(list: readonly T[], sizeOf: (x: T) => number, maxSize: number, maxCount = Infinity): T[][] {
  const runs: T[][] = [];
  let cur: T[] = [];
  let size = 0;
  for (const x of list) {
    const s = sizeOf(x);
    if (cur.length && (cur.length >= maxCount || size + s > maxSize)) {
      runs.push(cur);
      cur = [];
      size = 0;
    }
    cur.push(x);
    size += s;
  }
  if (cur.length) runs.push(cur);
  return runs;
}
