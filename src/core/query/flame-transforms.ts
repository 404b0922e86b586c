import { compilePattern } from '../base/text-match.ts';

/**
 * The flame graph's transforms, as the Firefox Profiler has them: each rewrites every stack's
 * frames before the stacks are merged into the tree, in the order they were applied.
 * - `focus`: the subtree of a function, merged over every place it occurs: each stack from the
 *   outermost call of the function down to its leaf; stacks without it drop out.
 * - `merge`: the function taken out of every stack; its callees join its caller.
 * - `rec`: recursion collapsed: from the outermost call of the function to the innermost, the
 *   frames between go (direct and indirect recursion), so the innermost call's callees hang under
 *   the outermost call.
 * - `drop`: every frame whose function matches a pattern (a substring, or /regex/ run by RE2)
 *   taken out, e.g. the syscall entry frames above every stack.
 * Functions are named without an offset: in a graph by call site a transform takes every site of
 * the function.
 */
export type FlameTransform = { kind: 'focus' | 'merge' | 'rec'; fn: string } | { kind: 'drop'; pattern: string };

export const TRANSFORM_KINDS = ['focus', 'merge', 'rec', 'drop'] as const;

/** A call site's function: `sym+0xoff` without its offset (a function name is its own). */
export function functionOfName(name: string): string {
  const k = name.lastIndexOf('+0x');
  if (k <= 0) return name;
  for (let i = k + 3; i < name.length; i++) {
    const c = name.charCodeAt(i);
    const hex = (c >= 48 && c <= 57) || (c >= 97 && c <= 102) || (c >= 65 && c <= 70);
    if (!hex) return name;
  }
  return k + 3 < name.length ? name.slice(0, k) : name;
}

/** `kind:arg` pairs joined by `;` (the URL's `tf=`); a `;` inside an argument is written `\;`, a `\` as `\\`. */
export function formatTransforms(list: readonly FlameTransform[]): string {
  const esc = (s: string) => s.replace(/\\/g, '\\\\').replace(/;/g, '\\;');
  return list.map((t) => `${t.kind}:${esc(t.kind === 'drop' ? t.pattern : t.fn)}`).join(';');
}

/** The transforms a `tf=` value holds; parts that are not one (an unknown kind, no argument) are left out. */
export function parseTransforms(text: string): FlameTransform[] {
  const parts: string[] = [];
  let cur = '';
  for (let i = 0; i < text.length; i++) {
    const c = text[i];
    if (c === '\\' && i + 1 < text.length) cur += text[++i];
    else if (c === ';') {
      parts.push(cur);
      cur = '';
    } else cur += c;
  }
  parts.push(cur);
  const out: FlameTransform[] = [];
  for (const p of parts) {
    const k = p.indexOf(':');
    if (k < 0) continue;
    const kind = p.slice(0, k);
    const arg = p.slice(k + 1);
    if (arg.trim() === '') continue;
    if (kind === 'drop') out.push({ kind, pattern: arg });
    else if (kind === 'focus' || kind === 'merge' || kind === 'rec') out.push({ kind, fn: arg });
  }
  return out;
}

/** What a transform says, for a breadcrumb. */
export function describeTransform(t: FlameTransform): string {
  switch (t.kind) {
    case 'focus':
      return `focus: ${t.fn}`;
    case 'merge':
      return `merge: ${t.fn}`;
    case 'rec':
      return `collapse recursion: ${t.fn}`;
    case 'drop':
      return `drop: ${t.pattern}`;
  }
}

/** One stack's frames, leaf first: function ids of the view, and the frame strings' indices beside them. */
export interface StackFrames {
  fns: number[];
  frames: number[];
}

/**
 * The transforms compiled against a view: per transform, a mask over the view's names of the
 * names it takes. Throws the pattern's error for a `drop` RE2 refuses (text-match.ts).
 */
export function compileTransforms(list: readonly FlameTransform[], view: { names: readonly string[] }): (s: StackFrames) => StackFrames | null {
  const n = view.names.length;
  const masks = list.map((t) => {
    const mask = new Uint8Array(n);
    if (t.kind === 'drop') {
      const test = compilePattern(t.pattern);
      for (let i = 0; i < n; i++) if (test(functionOfName(view.names[i]))) mask[i] = 1;
    } else for (let i = 0; i < n; i++) if (functionOfName(view.names[i]) === t.fn) mask[i] = 1;
    return mask;
  });
  return (s) => {
    let { fns, frames } = s;
    for (let k = 0; k < list.length; k++) {
      const m = masks[k];
      const kind = list[k].kind;
      if (kind === 'merge' || kind === 'drop') {
        const keep: number[] = [];
        for (let i = 0; i < fns.length; i++) if (!m[fns[i]]) keep.push(i);
        if (keep.length === fns.length) continue;
        fns = keep.map((i) => fns[i]);
        frames = keep.map((i) => frames[i]);
        continue;
      }
      // leaf first: the outermost call is the last index that matches, the innermost the first
      let inner = -1;
      let outer = -1;
      for (let i = 0; i < fns.length; i++) {
        if (!m[fns[i]]) continue;
        if (inner < 0) inner = i;
        outer = i;
      }
      if (kind === 'focus') {
        if (outer < 0) return null;
        fns = fns.slice(0, outer + 1);
        frames = frames.slice(0, outer + 1);
      } else if (inner >= 0 && inner < outer) {
        // rec: the innermost call and everything up to the outermost go, the outermost stays
        fns = [...fns.slice(0, inner), ...fns.slice(outer)];
        frames = [...frames.slice(0, inner), ...frames.slice(outer)];
      }
    }
    return { fns, frames };
  };
}
