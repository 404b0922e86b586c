/**
 * The explorer's questions and answers: what the UI asks the worker about a loaded capture.
 * Everything here is plain data (typed arrays, numbers, strings) so it crosses postMessage.
 */

/** What every pane is filtered by. */
export interface Selection {
  /** [t0, t1] in trace seconds; null: the whole trace */
  range: [number, number] | null;
  /**
   * A generation number; 'none' for records without one (v4..v7 ids); null: all generations.
   * A record's generation: its cookie's for a v8 cookie, otherwise the generation in force at
   * that point of the trace (the last v8 cookie's generation before it in file order).
   */
  generation: number | 'none' | null;
  /** CPUs to include; null: all */
  cpus: number[] | null;
}

export const ALL: Selection = { range: null, generation: null, cpus: null };

/** Status codes as in trace-columns.ts STATUS_NAMES (0..7), plus 8 for an event with no stack record. */
export const NO_STACK_RECORD = 8;
export const TIMELINE_STATUSES = 9;

export interface GenerationInfo {
  generation: number | 'none';
  /** first and last stack record of this generation (NaN if none) */
  firstTs: number;
  lastTs: number;
  /** stack records (cookies and full stacks) of this generation */
  records: number;
  cookies: number;
  resolved: number;
  /** resolved / cookies, NaN without cookies */
  coverage: number;
  /** formats of the dumps loaded for it (`stack_map_text`, `stack_map_bin`, `dump_json`) */
  dumpKinds: string[];
  dumpSlots: number;
  /** its records per segment (segments.ts): a span never reaches across unrelated trace files */
  segments: import('../capture/derived.ts').GenerationSpan[];
  /** the sum of the per-segment spans */
  duration: number;
}

export interface Overview {
  /** time of the first and last event or record */
  t0: number;
  t1: number;
  cpus: number[];
  /** the busiest tasks, for per-task lanes */
  tasks: { task: number; name: string; events: number }[];
  /** at most GENERATIONS_HEAD + GENERATIONS_TAIL (capture/derived.ts): the first generations in order and the last few */
  generations: GenerationInfo[];
  /** generations with records or dumps that `generations` (and so the page's generation list and `resets`) leaves out */
  generationsCut: number;
  /** where one generation ends and the next begins (between the two spans) */
  /** generation changes, or where the trace's own reset markers are (`marker`, v4/v7: no generation to change) */
  resets: { ts: number; from: number | 'none'; to: number | 'none'; marker?: boolean }[];
  lost: { ts: number; cpu: number; count: number | null }[];
  statusNames: readonly string[];
  /** the capture's disjoint time ranges, in time order (one for a single capture) */
  segments: import('../capture/segments.ts').Segment[];
  /** trace files whose events overlap in time on a CPU (probably the same capture twice) */
  overlaps: import('../capture/segments.ts').SegmentOverlap[];
  /** what top stacks and exports merge frames by unless asked: 'function' for perf script input, else 'site' */
  granularity: import('../capture/function-tree.ts').Granularity;
  /** whether events carry a weight of their own (perf's sample period): the flame graph then offers it */
  hasWeights: boolean;
}

export interface TimelineRequest {
  t0: number;
  t1: number;
  /** pixel columns */
  buckets: number;
  lanes: 'cpu' | 'task';
  selection: Selection;
  /** a stack to highlight: its occurrences are counted separately */
  highlightStack: number | null;
  /**
   * Time ranges laid side by side (the visible part of each segment), each with its own pixel
   * columns; when given, t0/t1 only bound them and `buckets` is the sum of theirs.
   */
  pieces?: { t0: number; t1: number; buckets: number }[];
}

export interface TimelineResult {
  lanes: { key: number; label: string }[];
  buckets: number;
  /** counts[(lane * buckets + bucket) * TIMELINE_STATUSES + status]: events by their stack record's status */
  counts: Uint32Array;
  /** highlight[lane * buckets + bucket]: events whose stack is the highlighted one */
  highlight: Uint32Array;
  /**
   * with an event filter on (per-CPU lanes): rest[lane * buckets + bucket], the events of the
   * capture the filter left out, drawn dimmed behind the ones it kept
   */
  rest?: Uint32Array;
}

export interface EventInfo {
  index: number;
  ts: number;
  cpu: number;
  pid: number;
  task: string;
  name: string;
  status: string;
  generation: number | null;
  slot: number | null;
  stack: number;
  /** leaf first, at most 12 */
  frames: string[];
  /**
   * A simulated run's truth of its stack record, from the ledger.json read with it: the outcome a
   * reader gets (correct, wrong, detected, unresolved, full), the generation it was written in, and
   * the run's index of the stack it stood for. Absent without a ledger that lines up.
   */
  truth?: { outcome: string; generation: number; stack: number };
}

export interface TopStacksRequest {
  selection: Selection;
  /** substring or /regex/ matched against each frame's function; '' for none */
  filter: string;
  limit: number;
  /** 'function': stacks that differ only in offsets are one row; absent: the capture's default (function-tree.ts) */
  granularity?: import('../capture/function-tree.ts').Granularity;
  /** what each row's `weight` sums: the records' own weights (default), or `field:NAME` (the page's worker weighs the records by it) */
  weight?: FlameWeight;
  /** a row per group and stack (weigh.ts GroupBy: task, process, event, field:NAME); the worker finds each event's group */
  group?: string;
}

export interface TopStackRow {
  stack: number;
  /** the stack's identity across captures (stack-hash.ts): what the URL and exports name it by */
  stackHash: string;
  /** the dump slots holding it: generation ('none': a generation-less dump) and slot, i.e. its stack_id */
  slots: DumpSlotRef[];
  /** occurrences in the selection (resolved cookies + full stacks) */
  count: number;
  /** count / all occurrences in the selection; weighed by period or a field (the request's `weight`), weight / the selection's weight */
  share: number;
  /** the dumps' ref_count summed over the generations it is in, null when no dump holds it */
  refCount: number | null;
  generations: (number | 'none')[];
  /** the leaf frame (its function at 'function' granularity) */
  leaf: string;
  depth: number;
  /** call-site stacks merged into this row ('function' granularity; 1 at 'site') */
  variants: number;
  /** the records' own weights summed (perf's period; = count where none was printed) */
  weight: number;
  /** ring-buffer bytes these occurrences saved: full-stack bytes minus the cookie bytes recorded */
  bytesSaved: number;
  /** grouped (TopStacksRequest.group): the row's group, a task, process, event or field value */
  group?: string;
}

export interface TopStacksResult {
  /** the granularity the rows are at */
  granularity: import('../capture/function-tree.ts').Granularity;
  rows: TopStackRow[];
  /** stacks matching before the limit */
  matching: number;
  total: number;
}

export type FlameMode = 'top-down' | 'bottom-up' | 'sandwich';
/**
 * occurrences; the dumps' ref_count; or each record's own weight (perf's sample period, 1 where
 * none was printed); or `field:NAME`, a numeric field of each record's event, read into the
 * record weights of a view made for it (the page's worker: weighted-view.ts), then as 'period'
 */
export type FlameWeight = 'occurrences' | 'refcount' | 'period' | `field:${string}`;
export type { Granularity } from '../capture/function-tree.ts';

export interface FlameRequest {
  selection: Selection;
  mode: FlameMode;
  weight: FlameWeight;
  /** frames merged by function, or kept by call site (`sym+0xoff`); absent: the capture's default (function-tree.ts) */
  granularity?: import('../capture/function-tree.ts').Granularity;
  /** sandwich: the function in the middle */
  focus: string | null;
  /** a stack whose path to mark */
  highlightStack: number | null;
  /** a root frame per group (weigh.ts GroupBy: task, process, event, field:NAME), top-down and bottom-up; the worker finds each event's group */
  group?: string;
  /** rewrites of every stack before the merge, in order (flame-transforms.ts): focus, merge, collapse recursion, drop */
  transforms?: import('./flame-transforms.ts').FlameTransform[];
  /**
   * top-down only: make only what a view shows, the nodes at least `minShare` of the zoomed node
   * (`zoom`: names from the root, the root's first; empty: the root) and that node's ancestors,
   * each with its exact total (flame-culled.ts). Absent: the whole tree.
   */
  cull?: { minShare: number; zoom: string[] };
  /**
   * a differential against the worker's baseline capture (issue 37), top-down: widths from the
   * open capture ('after') or the baseline ('before'), each node's other side in `other`
   */
  compare?: {
    widths: 'after' | 'before';
    /** which baseline (the page's count), so a new one is asked for */
    baseline?: number;
    /** the sides are two generations of the open capture (before, after), not the baseline capture and the selection */
    generations?: [number | 'none', number | 'none'];
  };
}

/**
 * A call tree merged by function name (frame keys without `+0xoff`), nodes in depth-first
 * pre-order, children by descending value. Sandwich: callers above (as a bottom-up tree of the
 * focus function) in `callers`, callees below in `tree`.
 */
export interface FlameTree {
  names: string[];
  /** per node: index into names */
  name: Int32Array;
  parent: Int32Array;
  depth: Int32Array;
  /** inclusive weight */
  value: Float64Array;
  /** weight of stacks ending here */
  self: Float64Array;
  total: number;
  /** nodes on the highlighted stack's path */
  highlight: Int32Array;
  /**
   * comparing with a baseline (FlameRequest.compare): per node, the other side's weight on the
   * same path of names (0 where it has none), and that side's total
   */
  other?: Float64Array;
  otherTotal?: number;
  /**
   * a tree cut to what a view shows (FlameRequest.cull): per node, the weight and the count of
   * its children not made (too narrow), which the view draws as one "..." span
   */
  hidden?: Float64Array;
  hiddenCount?: Int32Array;
}

export interface FlameResult {
  tree: FlameTree;
  /** sandwich only */
  callers: FlameTree | null;
  /** weighed by a field: the records whose event has no number there (they weigh 0), of all */
  unweighed?: { field: string; records: number; of: number };
  /** the worker's answers: what to ask its nodes' frames by (IngestApi.flameFrames), the tree sent without them */
  framesId?: number;
}

export interface SelectionSummary {
  events: number;
  cookies: number;
  fullStacks: number;
  resolved: number;
  unresolved: number;
  uniqueStacks: number;
  status: Record<string, number>;
  /** the selection's cookies that reused a slot already in the map */
  dedupRate: number;
  /** the selection's stack bytes in the ring buffer with and without the map */
  ringBuffer: import('../capture/ring-bytes.ts').RingBufferStats;
}

export interface GenerationDiffRow {
  stack: number;
  leaf: string;
  a: number;
  b: number;
}

export interface GenerationDiff {
  a: number | 'none';
  b: number | 'none';
  onlyA: GenerationDiffRow[];
  onlyB: GenerationDiffRow[];
  changed: GenerationDiffRow[];
}

/** A dump slot holding a stack: its generation ('none' for a generation-less dump) and slot (the stack_id). */
export interface DumpSlotRef {
  generation: number | 'none';
  slot: number;
}

export type ExportKind = 'folded' | 'speedscope' | 'chrome-trace' | 'svg';

export type { Warning } from '../capture/warning.ts';
