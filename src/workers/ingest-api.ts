import type { ParsedStat } from '../core/formats/types.ts';
import type { LoadProgress, NamedBlob } from '../core/model/load.ts';
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
} from '../core/model/query-types.ts';
import type { ExportOptions } from '../core/model/explorer.ts';
import type { Summary } from '../core/model/summary.ts';

export type { ExportOptions, LoadProgress, NamedBlob };

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
 * The ingest worker's API, called through Comlink. After a load the worker keeps the capture as
 * an Explorer; the query methods answer about the last capture loaded (they reject before one).
 */
export interface IngestApi {
  ingest(files: NamedBlob[], onProgress: (p: LoadProgress) => void): Promise<IngestResult>;
  /** stops the load in progress; its ingest() rejects with "cancelled" */
  cancel(): void;

  timeline(req: TimelineRequest): TimelineResult;
  eventNear(t: number, lane: number, lanes: 'cpu' | 'task', tolerance: number, selection: Selection): EventInfo | null;
  topStacks(req: TopStacksRequest): TopStacksResult;
  stackFrames(stack: number): string[];
  /** a stack's identity across captures (core/model/stack-hash.ts) */
  stackHash(stack: number): string;
  /** the stack with this stack_hash in the loaded capture, or null */
  stackByHash(hash: string): number | null;
  /** the selection's stacks and occurrence counts, busiest first, for the simulator's replay */
  replayStacks(selection: Selection, limit: number): { frames: string[][]; counts: number[] };
  stackOccurrences(stack: number, selection: Selection): Float64Array;
  flame(req: FlameRequest): FlameResult;
  selectionSummary(selection: Selection): SelectionSummary;
  generationDiff(a: number | 'none', b: number | 'none'): GenerationDiff;
  exportSelection(kind: ExportKind, selection: Selection, opts: ExportOptions): string;
}

export const CANCELLED = 'cancelled';
export const NO_CAPTURE = 'no capture loaded';
