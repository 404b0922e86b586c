import type { Diagnostic } from '../core/formats/diagnostics.ts';
import type { ParsedStat } from '../core/formats/types.ts';
import type { FileReport } from '../core/capture/ingest.ts';
import type { LoadRequest } from '../core/capture/capture-loads.ts';
import type { LoadProgress, NamedBlob } from '../core/capture/load.ts';
import type {
  EventInfo,
  ExportKind,
  FlameRequest,
  FlameResult,
  GenerationDiff,
  Overview,
  Selection,
  SelectionSummary,
  TimelineRequest,
  TimelineResult,
  TopStacksRequest,
  TopStacksResult,
  Warning,
} from '../core/query/api.ts';
import type { ExportOptions } from '../core/export/exports.ts';
import type { IdStoryView } from '../core/query/id-story.ts';
import type { NodeFrames } from '../core/query/flame-frames.ts';
import type { Summary } from '../core/capture/summary.ts';
import type { WhatIfColumns } from '../core/whatif/whatif-input.ts';
import type { EventFields } from '../core/query/field-columns.ts';

export type { ExportOptions, FileReport, LoadProgress, LoadRequest, NamedBlob };

export interface IngestResult {
  summary: Summary;
  /** what the panes need before their first query: span, CPUs, tasks, generations, resets */
  overview: Overview;
  warnings: Warning[];
  /** every stack_map_stat read, unknown keys included */
  stats: ParsedStat[];
  /** milliseconds from first byte to result */
  elapsedMs: number;
}

/**
 * What a load came to: the capture it made, or, when nothing in its files could be read (a
 * trace-cmd trace.dat, perf script output, random bytes), its file reports and diagnostics,
 * the capture before it kept whole.
 */
export type IngestAnswer = ({ outcome: 'loaded' } & IngestResult) | { outcome: 'rejected'; files: FileReport[]; diagnostics: Diagnostic[]; elapsedMs: number };

/** What an event filter (trace-cmd's -F syntax, core/capture/event-filter.ts) made of the capture: its filtered figures, or where the filter is wrong. */
export type FilterAnswer =
  | { outcome: 'applied'; text: string; summary: Summary; overview: Overview; warnings: Warning[]; elapsedMs: number }
  /** `line`: which of the text's filters (filterLines) failed, 0 for the first */
  | { outcome: 'error'; text: string; line: number; column: number; message: string };

/**
 * The ingest worker's API, called through Comlink. After a load the worker keeps the capture as
 * an Explorer; the query methods answer about the last capture loaded (they reject before one).
 */
export interface IngestApi {
  /**
   * Loads one request's files, one load at a time: `add` continues the session of the capture
   * loaded last (no file is read again), `replace` starts a new one. A newer request cancels an
   * older one still waiting or running.
   */
  ingest(request: LoadRequest, onProgress: (p: LoadProgress) => void): Promise<IngestAnswer>;
  /**
   * Cancels load `id`: its ingest() rejects with "cancelled" and the capture before it stays.
   * A load that already finished (its answer dropped by the page) is taken back, if it was the last.
   */
  cancel(id: number): void;
  /**
   * Filters the capture loaded last to the events `text` selects (trace-cmd's -F syntax; '' for
   * none): its files are read again keeping only those events and their stack records, and every
   * query from here on answers about that (until another filter or another load).
   */
  applyFilter(text: string): Promise<FilterAnswer>;
  /**
   * Resolves once this worker holds its liveness lock, with the lock's name: a Web Lock named
   * after the worker, held for as long as it lives. The page then asks for the same lock, which is
   * granted only when the worker is gone (crashed, out of memory, terminated). Null without Web Locks.
   */
  alive(): Promise<string | null>;
  /**
   * Test hook, only in a worker started with test hooks (the page's `?test-hooks`): blocks the
   * worker for good, as a reader caught in an endless loop would. Refused otherwise.
   */
  testStall(): void;
  /**
   * Test hook, as testStall: the next load's worker thread waits (Atomics.wait on `cell[0]`, set to
   * 1 while it waits) at its first progress report past `fraction` of its bytes (and short of the
   * last), until the page sets the cell to 2; a cancel sent meanwhile is seen when the load goes
   * on. The e2e tests cancel at a given percent this way, whatever the machine's speed
   * (e2e/load-cancel.spec.ts).
   */
  testHoldAt(cell: Int32Array, fraction: number): void;

  timeline(req: TimelineRequest): TimelineResult;
  eventNear(t: number, lane: number, lanes: 'cpu' | 'task', tolerance: number, selection: Selection): EventInfo | null;
  /** a simulated capture read with its ledger.json: its wrong (v7) or detected (v8) ids and each one's story (core/query/id-story.ts) */
  idStoryCount(): number;
  idStoryAt(n: number): IdStoryView | null;
  idStoryOfEvent(e: number): number;
  /** weighed by a field (`req.weight`), the first ask reads the capture's files again (core/query/weighted-view.ts) */
  topStacks(req: TopStacksRequest): Promise<TopStacksResult>;
  stackFrames(stack: number): string[];
  /** a stack's identity across captures (core/query/stack-hash.ts) */
  stackHash(stack: number): string;
  /** the stack with this stack_hash in the loaded capture, or null */
  stackByHash(hash: string): number | null;
  /** the selection's stacks and occurrence counts, busiest first, for the simulator's replay */
  replayStacks(selection: Selection, limit: number): { frames: string[][]; counts: number[] };
  stackOccurrences(stack: number, selection: Selection): Float64Array;
  /** the tree without its nodes' frames: those are `flameFrames(answer.framesId)`, asked after the paint */
  flame(req: FlameRequest): Promise<FlameResult>;
  /** the frames (sym+0xoff) merged into each node of a recent flame answer's trees; null once it is gone (8 answers later) */
  flameFrames(framesId: number): { tree: NodeFrames; callers: NodeFrames | null } | null;
  selectionSummary(selection: Selection): SelectionSummary;
  generationDiff(a: number | 'none', b: number | 'none'): GenerationDiff;
  /** `opts.group` (task, process, event, field:NAME): a root frame per group in the folded and speedscope files, as the flame graph shows */
  exportSelection(kind: ExportKind, selection: Selection, opts: ExportOptions & { group?: string }): Promise<string>;
  /**
   * What the what-if replay needs of this capture (core/whatif/whatif-input.ts), made once per
   * capture: the page replays it in a worker of its own (whatif-client.ts), not in this one.
   */
  whatIfColumns(): WhatIfColumns;
  /** the capture's event names (for completing a filter) */
  eventNames(): string[];
  /** the payload fields with numbers (what the flame graph can weigh by), the most common first; the first ask reads the files again */
  numericFields(): Promise<{ name: string; events: number }[]>;
  /** each event name's payload fields, numeric or not (what a filter can name after `EVENT:`); read with numericFields' reading */
  eventFields(): Promise<EventFields[]>;
  /**
   * A baseline capture beside the open one (issue 37): read from its files and kept apart, the
   * "before" of every comparison until dropped (null). Its summary, or why nothing was read.
   */
  loadBaseline(files: NamedBlob[] | null): Promise<BaselineAnswer>;
  /** The open capture's selection against the whole baseline, stack by stack (core/export/diff.ts). */
  compare(req: CompareRequest): Promise<import('../core/export/diff.ts').DiffResult>;
  /** difffolded.pl's lines of that comparison (the folded diff export) */
  compareFolded(req: CompareRequest): Promise<string>;
  /** the capture's tables (core/tables/schema.ts) as Arrow IPC streams, for the SQL pane; the buffers are transferred */
  tables(): Promise<import('./sql-api.ts').SqlTableIpc[]>;
}

export type BaselineAnswer = { outcome: 'loaded'; summary: Summary } | { outcome: 'rejected'; reason: string } | { outcome: 'dropped' };

/** A comparison: the open capture's selection, weighed and framed as the panes are, against the whole baseline. */
export interface CompareRequest {
  selection: Selection;
  weight: import('../core/query/api.ts').FlameWeight;
  granularity?: import('../core/capture/function-tree.ts').Granularity;
  /** scale the baseline to the open capture's total (difffolded.pl -n) */
  normalize: boolean;
  /** the sides are two generations of the open capture (before, after), not the baseline capture and the selection */
  generations?: [number | 'none', number | 'none'];
}

export const CANCELLED = 'cancelled';
/** in a worker's name: it accepts the test hooks (testStall, testHoldAt) */
export const TEST_HOOKS = 'test-hooks';
/**
 * Whether this bundle carries the e2e tests' hooks at all: the dev server's (`npm start`) and the
 * e2e tests' own build (`VITE_TEST_HOOKS=1 vite build --outDir dist-hooks`, package.json
 * test:e2e), never the production build, where Vite makes this `false` and the minifier drops
 * every use with the strings (e2e/dist-files.spec.ts greps dist/ for them).
 */
export const TEST_HOOKS_BUILT: boolean = import.meta.env.DEV || import.meta.env.VITE_TEST_HOOKS === '1';
export const NO_CAPTURE = 'no capture loaded';
