import { ExplorerData } from './explorer-data.ts';
import { flame } from './flame.ts';
import { generationDiff } from './generation-diff.ts';
import type { Capture } from '../capture/ingest.ts';
import { overview } from './overview.ts';
import type {
  EventInfo,
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
} from './api.ts';
import { selectionSummary } from './selection-summary.ts';
import { stackByHash, stackHashOf } from './stack-hash.ts';
import { eventNear } from './event-near.ts';
import { timeline } from './timeline.ts';
import { idStoryAt, idStoryCount, idStoryOfEvent, type IdStoryView } from './id-story.ts';
import { stackOccurrences, topStacks } from './top-stacks.ts';
import { warnings } from './warnings.ts';

/**
 * The queries the panes ask about one loaded capture. The constructor precomputes, in single
 * passes over typed arrays, what every query needs (ExplorerData: effective generations, event
 * statuses, timestamp order); each method then answers from the columns without per-event objects.
 */
export class Explorer {
  readonly data: ExplorerData;
  private cachedOverview: Overview | null = null;

  constructor(readonly capture: Capture) {
    this.data = new ExplorerData(capture);
  }

  overview(): Overview {
    return (this.cachedOverview ??= overview(this.data));
  }
  timeline(req: TimelineRequest): TimelineResult {
    return timeline(this.data, req);
  }
  /** lane: a CPU number for 'cpu' lanes, a task key (TimelineResult.lanes[].key) for 'task' lanes */
  eventNear(t: number, lane: number, lanes: 'cpu' | 'task', tolerance: number, selection: Selection): EventInfo | null {
    return eventNear(this.data, t, lane, lanes, tolerance, selection);
  }
  /** a simulated capture's wrong (v7) or detected (v8) ids, with its ledger.json (id-story.ts) */
  idStoryCount(): number {
    return idStoryCount(this.data);
  }
  idStoryAt(n: number): IdStoryView | null {
    return idStoryAt(this.data, n);
  }
  idStoryOfEvent(e: number): number {
    return idStoryOfEvent(this.data, e);
  }
  topStacks(req: TopStacksRequest): TopStacksResult {
    return topStacks(this.data, req);
  }
  /** frame keys, leaf first ([] for an unknown stack) */
  stackFrames(stack: number): string[] {
    return stack > 0 && stack < this.data.stacks.nodeCount ? this.data.stacks.framesOf(stack) : [];
  }
  /** the functions of a stack's frames (offsets dropped), leaf first ([] for an unknown stack) */
  stackFunctions(stack: number): string[] {
    return stack > 0 && stack < this.data.stacks.nodeCount ? this.data.functionsOf(stack).map((f) => this.data.fnNames[f]) : [];
  }
  /** stack_hash of a stack ('' for an index that is no stack of this capture) */
  stackHash(stack: number): string {
    return stack >= 0 && stack < this.data.stacks.nodeCount ? stackHashOf(this.data, stack) : '';
  }
  /** the capture's stack with this stack_hash, or null (a link from another capture) */
  stackByHash(hash: string): number | null {
    return stackByHash(this.data, hash);
  }
  /**
   * The selection's stacks with their occurrence counts, busiest first (at most `limit`), for the
   * simulator to replay the capture's workload.
   */
  replayStacks(selection: Selection, limit = 4096): { frames: string[][]; counts: number[] } {
    const { rows } = topStacks(this.data, { selection, filter: '', limit, granularity: 'site' });
    return { frames: rows.map((r) => this.stackFrames(r.stack)), counts: rows.map((r) => r.count) };
  }
  stackOccurrences(stack: number, selection: Selection): Float64Array {
    return stackOccurrences(this.data, stack, selection);
  }
  flame(req: FlameRequest): FlameResult {
    return flame(this.data, req);
  }
  selectionSummary(sel: Selection): SelectionSummary {
    return selectionSummary(this.data, sel);
  }
  generationDiff(a: number | 'none', b: number | 'none'): GenerationDiff {
    return generationDiff(this.data, a, b);
  }
  warnings(): Warning[] {
    return warnings(this.data);
  }
}
