/**
 * The first `k` of `items` in the order `cmp` gives, as `items.slice().sort(cmp).slice(0, k)`
 * gives them when `cmp` is a total order (no two items equal), without sorting the rest: a heap
 * of the best `k` met so far, its worst on top, so an item that does not beat the worst costs
 * one comparison. A page of 200 top stacks among 262,144 that tie on their count (every stack
 * of a dump cited once) took a full sort of 4-5M comparisons; this takes about one per stack.
 * `k` past a quarter of the items: the sort itself.
 */
export function firstK(items: readonly number[], k: number, cmp: (a: number, b: number) => number): number[] {
  // as slice(0, k) reads k: a fraction cut down, no number none
  const n = Math.floor(k);
  if (!(n > 0)) return [];
  if (4 * n >= items.length) return items.slice().sort(cmp).slice(0, n);
  const heap: number[] = [];
  for (let i = 0; i < items.length; i++) {
    const x = items[i];
    if (heap.length < n) {
      // up while it comes after its parent (the worst on top)
      let j = heap.push(x) - 1;
      while (j > 0) {
        const p = (j - 1) >> 1;
        if (cmp(heap[j], heap[p]) <= 0) break;
        [heap[j], heap[p]] = [heap[p], heap[j]];
        j = p;
      }
    } else if (cmp(x, heap[0]) < 0) {
      // the worst replaced, then down below each child that comes after it
      heap[0] = x;
      let j = 0;
      for (;;) {
        const l = 2 * j + 1;
        if (l >= n) break;
        const c = l + 1 < n && cmp(heap[l + 1], heap[l]) > 0 ? l + 1 : l;
        if (cmp(heap[c], heap[j]) <= 0) break;
        [heap[j], heap[c]] = [heap[c], heap[j]];
        j = c;
      }
    }
  }
  return heap.sort(cmp);
}
