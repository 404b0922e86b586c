/**
 * A zeroed typed array of `n` elements about to take `writes` writes at scattered places. A fresh
 * large array is the platform's zeroed memory, each page made when first touched: a few writes
 * fault in a few pages, but past a share of the elements, faults at scattered pages cost more
 * than a fill that makes them in order (Node, a Float64Array of 7.9M nodes and 262,144 writes at
 * the stacks of a dump: 85-100 ms, against 34 ms for the fill and 14-20 ms for the writes).
 */
export function zeroed<T extends Float64Array | Int32Array | Uint32Array>(make: new (n: number) => T, n: number, writes: number): T {
  const a = new make(n);
  if (writes > n / SCATTERED) a.fill(0);
  return a;
}

/** writes past n / SCATTERED: the fill first (a write every 64 elements touches every page of 8-byte ones) */
const SCATTERED = 64;
