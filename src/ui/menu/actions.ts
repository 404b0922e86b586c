import { useViewStore } from '../../state/view/view-store.ts';
import type { FlameTransform } from '../../core/query/flame-transforms.ts';
import { copyText, useMenuStore, type MenuItem } from './menu-store.ts';

/** `sym+0xoff` -> `sym` (the function a flame graph node merges), as the core's frameFunction does for offsets */
export const functionOf = (frame: string) => frame.replace(/\+0x[0-9a-f]+$/i, '');

/** The text a stack is copied as: its frames, leaf first, one a line (as ftrace prints them, without ` => `). */
export const stackText = (frames: readonly string[]) => frames.join('\n');

/** The filter text that keeps one stack (top stacks filter, flame graph search): `stack:` and its stack_hash. */
export const stackFilter = (hash: string) => `stack:${hash}`;

const view = () => useViewStore.getState();

/** Sandwich on a function: its callers above, its callees below (the flame graph by function, whatever its frames were). */
export function focusFunction(fn: string): void {
  view().set({ flameMode: 'sandwich', flameFocus: fn, flameZoom: [], flameFrames: 'function' });
}

/** Sandwich on a flame graph node as it is named: a function, or a call site in a graph by call site. */
function focusNode(name: string): void {
  view().set({ flameMode: 'sandwich', flameFocus: name, flameZoom: [] });
}

/** A transform added to the flame graph's (a history entry: Back takes it off); the zoom starts over, since the tree changes shape. */
export function addTransform(t: FlameTransform): void {
  view().set({ flameTransforms: [...view().flameTransforms, t], flameZoom: [] });
}

/** A regular expression matching exactly this text, for RE2 (text-match.ts). */
const exactly = (text: string) => `/^${text.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&')}$/`;

/** Top stacks and the flame graph search keep only this stack; it is selected too. */
export function filterToStack(stack: number, hash: string): void {
  const f = stackFilter(hash);
  view().set({ filter: f, flameSearch: f, stack });
}

interface StackTarget {
  stack: number;
  /** its stack_hash, when known: "filter to this stack" needs it */
  hash: string | null;
  /** the frame the menu was opened on (a row: its leaf) */
  frame: string;
  /** every frame, leaf first, once known (the menu asks for them while it is open) */
  frames: readonly string[] | null;
}

/** The menu of a stack (a top-stacks row, a diff row, a frame of the selected stack). */
export function stackMenu(t: StackTarget): MenuItem[] {
  const fn = functionOf(t.frame);
  return [
    { id: 'copy-frame', label: 'Copy frame', detail: t.frame, run: () => copyText(t.frame, 'frame') },
    {
      id: 'copy-stack',
      label: 'Copy stack',
      detail: t.frames ? `${t.frames.length} frames, leaf first` : 'reading its frames…',
      disabled: !t.frames,
      run: () => copyText(stackText(t.frames ?? []), 'stack'),
    },
    { id: 'focus-function', label: 'Focus on this function', detail: fn, hint: 'sandwich: its callers above, its callees below', run: () => focusFunction(fn) },
    {
      id: 'filter-stack',
      label: 'Filter to this stack',
      detail: t.hash ? stackFilter(t.hash) : 'finding its stack_hash…',
      hint: 'top stacks and the flame graph search keep only this stack (by stack_hash, so the link works in another capture)',
      disabled: !t.hash,
      run: () => filterToStack(t.stack, t.hash!),
    },
    {
      id: 'show-in-timeline',
      label: 'Show in timeline',
      hint: 'select it and zoom the timeline to its occurrences',
      run: () => useMenuStore.getState().revealStack(t.stack),
    },
    { id: 'highlight-frame', label: 'Highlight this frame in the flame graph', detail: t.frame, run: () => view().set({ flameSearch: t.frame }) },
  ];
}

interface FlameNodeTarget {
  /** function name (what the node shows) */
  name: string;
  /** the frames (sym+0xoff) merged into it, heaviest first; null while the worker sends them */
  frames: readonly string[] | null;
  /** function names from the root to it */
  path: readonly string[];
  /** false for the synthetic root */
  real: boolean;
  zoom(): void;
}

/** The menu of a flame graph node. */
export function flameNodeMenu(t: FlameNodeTarget): MenuItem[] {
  const items: MenuItem[] = [];
  const frames = t.frames;
  if (frames === null) items.push({ id: 'copy-frame', label: 'Copy its frames', detail: 'reading its frames…', disabled: true, run: () => {} });
  else if (frames.length === 1) items.push({ id: 'copy-frame', label: 'Copy frame', detail: frames[0], run: () => copyText(frames[0], 'frame') });
  else if (frames.length > 1)
    items.push({ id: 'copy-frame', label: `Copy its ${frames.length} frames`, detail: `${frames[0]}, …`, run: () => copyText(frames.join('\n'), 'frames') });
  if (t.real) {
    items.push(
      // a node of a graph by call site is named `sym+0xoff`: its function is the name without the offset
      { id: 'copy-function', label: 'Copy function name', detail: functionOf(t.name), run: () => copyText(functionOf(t.name), 'function name') },
      {
        id: 'copy-stack',
        label: 'Copy call path',
        detail: `${t.path.length} functions, leaf first`,
        run: () => copyText(stackText([...t.path].reverse()), 'call path'),
      },
      {
        id: 'focus-function',
        label: 'Focus on this function',
        detail: t.name,
        hint: 'sandwich: its callers above, its callees below',
        run: () => focusNode(t.name),
      },
      { id: 'highlight-frame', label: 'Highlight this function', detail: t.name, run: () => view().set({ flameSearch: exactly(t.name) }) },
      // transforms (flame-transforms.ts), by function: a call site's node takes every site of its function
      {
        id: 'transform-focus',
        label: 'Focus on its subtree',
        detail: functionOf(t.name),
        hint: 'every stack from the outermost call of this function down, merged over every place it is called from',
        run: () => addTransform({ kind: 'focus', fn: functionOf(t.name) }),
      },
      {
        id: 'transform-merge',
        label: 'Merge function',
        detail: functionOf(t.name),
        hint: 'take it out of every stack: its callees join its caller',
        run: () => addTransform({ kind: 'merge', fn: functionOf(t.name) }),
      },
      {
        id: 'transform-rec',
        label: 'Collapse recursion',
        detail: functionOf(t.name),
        hint: 'from its outermost call to its innermost, the frames between go',
        run: () => addTransform({ kind: 'rec', fn: functionOf(t.name) }),
      },
      {
        id: 'transform-drop',
        label: 'Drop this function’s frames',
        detail: functionOf(t.name),
        hint: 'as merge; the breadcrumb’s drop box takes any pattern',
        run: () => addTransform({ kind: 'drop', pattern: exactly(functionOf(t.name)) }),
      },
    );
  }
  items.push({ id: 'zoom', label: 'Zoom to fit', hint: 'double-click does the same', run: () => t.zoom() });
  return items;
}
