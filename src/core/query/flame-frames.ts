// A flame tree's frames (the sym+0xoff merged into each node) apart from the tree: made only when
// first read, and left out of what the page draws from until it asks for them.
import type { FlameTree } from './api.ts';

/** The frames merged into each node (by function name), as sym+0xoff with the weight through each. */
export interface NodeFrames {
  frameNames: string[];
  /** node i's frames: frameOf[frameStart[i] .. frameStart[i + 1]) into frameNames, heaviest first */
  frameStart: Int32Array;
  frameOf: Int32Array;
  frameValue: Float64Array;
}

/** A flame tree that also says which frames (sym+0xoff) each node merges. */
export type FlameTreeFrames = FlameTree & NodeFrames;

const FRAME_FIELDS = ['frameNames', 'frameStart', 'frameOf', 'frameValue'] as const;

/**
 * `tree` with its nodes' frames made only when first read (`make`, once): the page draws a tree
 * from its names and numbers and asks for the frames afterwards (the worker's flameFrames), so
 * naming every merged frame (a string per distinct sym+0xoff) is not on the way to the first paint.
 */
export function lazyFrames<T extends FlameTree>(tree: T, make: () => NodeFrames): T & NodeFrames {
  let made: NodeFrames | null = null;
  const get = () => (made ??= make());
  for (const k of FRAME_FIELDS) Object.defineProperty(tree, k, { get: () => get()[k], enumerable: true, configurable: true });
  return tree as T & NodeFrames;
}

/** A tree's frames, made if they were not yet, apart from the tree (what flameFrames sends). */
export function framesOf(t: NodeFrames): NodeFrames {
  return { frameNames: t.frameNames, frameStart: t.frameStart, frameOf: t.frameOf, frameValue: t.frameValue };
}

/** A tree without its frames: what the page draws from (the frames' getters are not run). */
export function withoutFrames<T extends FlameTree>(t: T): FlameTree {
  const out: Record<string, unknown> = {};
  for (const k of Object.keys(t)) if (!(FRAME_FIELDS as readonly string[]).includes(k)) out[k] = (t as Record<string, unknown>)[k];
  return out as unknown as FlameTree;
}
