import { escapeControls } from '../base/control-chars.ts';
import type { ExplorerData } from '../query/explorer-data.ts';
import { flame, stackWeights } from '../query/flame.ts';
import { flameSvg } from './flame-svg.ts';
import { STATUS_NAMES_WITH_NONE } from '../query/overview.ts';
import type { ExportKind, FlameMode, FlameWeight, Granularity, Selection } from '../query/api.ts';
import { exportStackcollapse } from './stackcollapse.ts';
import { NO_GEN } from '../query/selection.ts';
import { stackHashOf } from '../query/stack-hash.ts';
import { RecordKind } from '../capture/trace-columns-data.ts';
import { weighStacks, type EventGroups } from '../query/weigh.ts';

/** local copies: an imported binding can cost a getter call per access under module transforms (tsx, vitest) */
const { CookieV7: COOKIE_V7, CookieV8: COOKIE_V8 } = RecordKind;

export interface ExportOptions {
  /** svg: the flame graph's shape (default top-down) */
  mode?: FlameMode;
  /** folded, speedscope, svg: weight of a stack (default occurrences) */
  weight?: FlameWeight;
  /** svg sandwich: the function in the middle */
  focus?: string | null;
  /** svg: the differential against the worker's baseline, drawn as the page draws it (the worker builds it) */
  compare?: import('./diff-color.ts').DiffDraw & { generations?: [number | 'none', number | 'none'] };
  /** svg: width in pixels (default 1200) */
  width?: number;
  title?: string;
  /** folded, speedscope, svg: frames by function or by call site (default: the capture's, function-tree.ts) */
  granularity?: Granularity;
  /** folded: stackcollapse-perf.pl's own output, line for line (stackcollapse.ts); weight and granularity are its */
  stackcollapse?: boolean;
  /** folded, speedscope: per event its weight (weigh.ts fieldValues; NaN weighs 0), in place of `weight` */
  eventWeights?: Float64Array | ((e: number) => number) | null;
  /** folded, speedscope: a root frame per group (weigh.ts eventGroups), as stackcollapse-perf.pl's comm */
  groups?: EventGroups | null;
  /** folded, speedscope with eventWeights or groups: what was counted (the records, their weight, those that weighed 0 for want of the field) */
  onWeighed?: (w: { total: number; totalWeight: number; unweighed: number }) => void;
}

/** How foldedPaths weighs and groups beyond `weight` (ExportOptions' fields of the same names). */
export type FoldedBy = Pick<ExportOptions, 'eventWeights' | 'groups' | 'onWeighed'>;

/** A path of foldedPaths: root-first name indices, its weight, and its group's name when grouped. */
export interface FoldedPath {
  path: number[];
  weight: number;
  group: string | null;
}

/** the group of a record without an event (grouped folded lines) */
export const NO_GROUP = '[no event]';

/** the folded name of a stack with no frames (a `<stack trace>` with nothing under it) */
export const NO_FRAMES = '[no frames]';

/**
 * A frame made safe for folded lines: `;` separates frames (it becomes `_`), and control
 * characters (a newline would end the line, an escape sequence rewrite the terminal it is
 * printed to) are written as `\n`, `\x1b`, ... (control-chars.ts, as the command line prints them).
 */
const foldedName = (s: string) => escapeControls(s).replace(/;/g, '_');

/**
 * Frame paths (root first, as name indices into `names`: frame keys `sym+0xoff` at 'site'
 * granularity, like the Chrome trace export, or functions at 'function') of the selection's
 * stacks with their weights, merged by path, sorted by path. With `by.groups`, a path per group
 * and stack, its group's name in `group` (the root-most frame of the line); with
 * `by.eventWeights`, each record weighs its event's weight (weigh.ts weighStacks).
 */
export function foldedPaths(
  d: ExplorerData,
  sel: Selection,
  weight: FlameWeight,
  granularity?: Granularity,
  by: FoldedBy = {},
): { names: readonly string[]; paths: FoldedPath[] } {
  const view = d.frameView(d.granularityOf(granularity));
  let w: { stacks: ArrayLike<number>; weights: ArrayLike<number>; groups: ArrayLike<number> | null };
  let groupNames: readonly string[] = [];
  if (by.eventWeights || by.groups) {
    const r = weighStacks(d, { selection: sel, weight, eventWeights: by.eventWeights, groups: by.groups });
    by.onWeighed?.({ total: r.total, totalWeight: r.totalWeight, unweighed: r.unweighed });
    w = { stacks: r.rows.map((x) => x.stack), weights: r.rows.map((x) => x.weight), groups: by.groups ? r.rows.map((x) => x.group) : null };
    groupNames = by.groups?.names ?? [];
  } else w = { ...stackWeights(d, sel, weight), groups: null };
  const byKey = new Map<string, FoldedPath>();
  for (let i = 0; i < w.stacks.length; i++) {
    if (w.weights[i] === 0) continue;
    const path = d.functionsOf(w.stacks[i], view).reverse();
    const g = w.groups ? w.groups[i] : -1;
    const group = w.groups ? (g >= 0 ? groupNames[g] : NO_GROUP) : null;
    const key = (w.groups ? g + ':' : '') + path.join(',');
    const x = byKey.get(key);
    if (x) x.weight += w.weights[i];
    else byKey.set(key, { path, weight: w.weights[i], group });
  }
  const out = [...byKey.values()];
  const text = (p: FoldedPath) => (p.group === null ? '' : p.group + ';') + p.path.map((f) => view.names[f]).join(';');
  const keys = new Map(out.map((x) => [x, text(x)]));
  return { names: view.names, paths: out.sort((a, b) => (keys.get(a)! < keys.get(b)! ? -1 : keys.get(a)! > keys.get(b)! ? 1 : 0)) };
}

/**
 * Brendan Gregg's folded stacks: one line per distinct stack, `root;...;leaf count`, each frame
 * as `sym+0xoff` at 'site' granularity (flamegraph.pl and inferno merge by the text, so a
 * function called from two sites stays two frames, as in the trace) or its function at
 * 'function' (the default for perf script input), the counts summing to the selection's
 * occurrences (or ref_counts with weight 'refcount', periods with 'period'). For the script's
 * own output, line for line, see stackcollapse.ts.
 */
export function exportFolded(d: ExplorerData, sel: Selection, weight: FlameWeight = 'occurrences', granularity?: Granularity, by: FoldedBy = {}): string {
  const { names, paths } = foldedPaths(d, sel, weight, granularity, by);
  const lines = paths.map((x) => foldedLine(names, x) + ' ' + x.weight);
  return lines.length ? lines.join('\n') + '\n' : '';
}

/** A folded path's stack text, as a folded line has it before its count: `group;root;...;leaf`. */
export function foldedLine(names: readonly string[], x: FoldedPath): string {
  return (x.group === null ? '' : foldedName(x.group) + ';') + (x.path.length ? x.path.map((f) => foldedName(names[f])).join(';') : NO_FRAMES);
}

/** A speedscope file (https://www.speedscope.app/file-format-schema.json): one sampled profile, a sample per stack, frames as `sym+0xoff` (or functions, at 'function' granularity). */
export function exportSpeedscope(
  d: ExplorerData,
  sel: Selection,
  weight: FlameWeight = 'occurrences',
  title = 'stackmap selection',
  granularity?: Granularity,
  by: FoldedBy = {},
): string {
  const { names, paths } = foldedPaths(d, sel, weight, granularity, by);
  const frames: { name: string }[] = [];
  const frameOf = new Map<number, number>();
  let noFrames = -1;
  const idx = (f: number) => {
    let i = frameOf.get(f);
    if (i === undefined) {
      i = frames.length;
      frames.push({ name: names[f] });
      frameOf.set(f, i);
    }
    return i;
  };
  const groupFrame = new Map<string, number>();
  const groupIdx = (g: string) => {
    let i = groupFrame.get(g);
    if (i === undefined) (groupFrame.set(g, (i = frames.length)), frames.push({ name: g }));
    return i;
  };
  const samples: number[][] = [];
  const weights: number[] = [];
  let total = 0;
  for (const p of paths) {
    const root = p.group === null ? [] : [groupIdx(p.group)];
    if (p.path.length) samples.push(root.concat(p.path.map(idx)));
    else {
      if (noFrames < 0) (frames.push({ name: NO_FRAMES }), (noFrames = frames.length - 1));
      samples.push(root.concat([noFrames]));
    }
    weights.push(p.weight);
    total += p.weight;
  }
  return JSON.stringify({
    $schema: 'https://www.speedscope.app/file-format-schema.json',
    shared: { frames },
    profiles: [{ type: 'sampled', name: title, unit: 'none', startValue: 0, endValue: total, samples, weights }],
    name: title,
    activeProfileIndex: 0,
    exporter: 'stackmap-explorer',
  });
}

/** the single process the chrome-trace export puts every task in (ftrace text has no reliable TGID) */
export const CHROME_PID = 1;

/**
 * Chrome trace event JSON (Perfetto and chrome://tracing open it): an instant event ("ph":"i",
 * thread scope) per event of the selection, ts in microseconds, tid = the task's pid, cat = its
 * stack record's status, args = CPU, generation, slot, stack_hash and the stack's frames (leaf first); plus
 * process_name and a thread_name per tid (its first comm). Built as text, memoizing each stack's JSON.
 */
export function exportChromeTrace(d: ExplorerData, sel: Selection, title = 'ftrace (stackmap explorer)'): string {
  const t = d.t;
  const parts: string[] = [];
  const threadName = new Map<number, number>();
  const nameJson = new Map<number, string>();
  const stackJson = new Map<number, string>();
  const statusJson = STATUS_NAMES_WITH_NONE.map((s) => JSON.stringify(s));
  d.eachEvent(sel, (e) => {
    const tid = d.ev.pid[e];
    if (!threadName.has(tid)) threadName.set(tid, d.ev.task[e]);
    const ni = d.ev.name[e];
    let name = nameJson.get(ni);
    if (name === undefined) nameJson.set(ni, (name = JSON.stringify(t.names.strings[ni])));
    const r = d.ev.record[e];
    let args = `"cpu":${d.ev.cpu[e]}`;
    if (r >= 0) {
      const g = d.evGen[e];
      if (g !== NO_GEN) args += `,"generation":${g}`;
      const kind = d.rec.kind[r];
      if (kind === COOKIE_V7 || kind === COOKIE_V8) args += `,"slot":${d.rec.slot[r]}`;
      const s = d.rec.stack[r];
      if (s >= 0) {
        let sj = stackJson.get(s);
        // named by stack_hash (the same in every capture), never by this capture's index
        if (sj === undefined) stackJson.set(s, (sj = `"stack_hash":"${stackHashOf(d, s)}","stack":${JSON.stringify(d.stacks.framesOf(s))}`));
        args += `,${sj}`;
      }
    }
    const us = Math.round(d.ev.ts[e] * 1e9) / 1e3;
    parts.push(
      `{"name":${name},"cat":${statusJson[d.evStatus[e]]},"ph":"i","s":"t","ts":${Number.isFinite(us) ? us : 0},"pid":${CHROME_PID},"tid":${tid},"args":{${args}}}`,
    );
  });
  const meta = [JSON.stringify({ name: 'process_name', ph: 'M', pid: CHROME_PID, tid: 0, args: { name: title } })];
  for (const [tid, task] of threadName)
    meta.push(JSON.stringify({ name: 'thread_name', ph: 'M', pid: CHROME_PID, tid, args: { name: t.tasks.strings[task] } }));
  return '{"traceEvents":[\n' + meta.concat(parts).join(',\n') + '\n],"displayTimeUnit":"ms"}\n';
}

export function exportSelection(d: ExplorerData, kind: ExportKind, sel: Selection, opts: ExportOptions = {}): string {
  const weight = opts.weight ?? 'occurrences';
  switch (kind) {
    case 'folded':
      return opts.stackcollapse ? exportStackcollapse(d, sel) : exportFolded(d, sel, weight, opts.granularity, opts);
    case 'speedscope':
      return exportSpeedscope(d, sel, weight, opts.title, opts.granularity, opts);
    case 'chrome-trace':
      return exportChromeTrace(d, sel, opts.title);
    case 'svg': {
      const mode = opts.mode ?? 'top-down';
      const r = flame(d, { selection: sel, mode, weight, focus: opts.focus ?? null, highlightStack: null, granularity: opts.granularity });
      return flameSvg(r, { width: opts.width, title: opts.title ?? `stackmap flame graph (${mode}, ${weight})`, mode });
    }
    default:
      throw new Error(`unknown export kind: ${String(kind)}`);
  }
}
