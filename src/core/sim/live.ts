import type { MapEventKind } from './shared-map.ts';

/**
 * What a live host (the browser's simulator pane) watches besides the map: one SharedArrayBuffer
 * that the CPU workers and the tracefs workers write and the page polls.
 *
 *   header   LIVE_HEADER words: the log's write cursor, then a total per event kind (exact, even
 *            when the log has overwritten the entries)
 *   per CPU  LANE_WORDS each: state, slot, generation at the state, record cursor, then
 *            RECENT records of 4 words (type, slot, generation, stack)
 *   log      LOG_ENTRIES entries of LOG_WORDS: seq (index + 1, written last), kind, cpu, slot,
 *            generation, time (ms since the run started)
 *
 * Writers take a log index with `Atomics.add` and publish the entry by storing its seq last; a
 * reader skips an entry whose seq does not match (being written, or already overwritten).
 */

/**
 * The one clock the simulator's views share: the trace's timestamps (records are stamped with
 * seconds since the run started plus 100, as an uptime, cpu-loop.ts recordClock), so the event
 * log, the stories, slow motion and the explorer's timeline print the same second for one moment.
 * `ms`: milliseconds since the run started, the log's own unit.
 */
export const traceSeconds = (ms: number): number => ms / 1000 + 100;

export const EVENT_KINDS = [
  'hit',
  'claim',
  'publish',
  'unpublished',
  'gravestone',
  'lost',
  'lost-same',
  'duplicate',
  'fallback-pool',
  'fallback-probe',
  'fallback-inflight',
  'fallback-gravestone',
  'bypass',
  'nested',
  'deep',
  'rcu-discard',
  'option-on',
  'option-off',
  'free',
  'free-wait',
  'reset-flag',
  'reset-drained',
  'reset-cleared',
  'reset-done',
  'ebusy',
  'refused',
  // the host's own
  'estale',
  'dump',
  'text-spliced',
  'v4-pause',
  'dump-during-reset',
] as const satisfies readonly (MapEventKind | string)[];
export type LiveEventKind = (typeof EVENT_KINDS)[number];
const KIND_INDEX = new Map<LiveEventKind, number>(EVENT_KINDS.map((k, i) => [k, i]));

/** Not logged (too frequent to read); they only move the lanes and the totals. */
const QUIET = new Set<LiveEventKind>(['hit', 'claim', 'publish', 'rcu-discard', 'deep']);

export const LANE_STATE = { WAITING: 0, RECORDING: 1, CLAIMED: 2, BYPASS: 3, STOPPED: 4, NESTED: 5 } as const;

const LIVE_HEADER = 48;
const RECENT = 12;
const LANE_WORDS = 4 + RECENT * 4;
export const LOG_ENTRIES = 4096;
const LOG_WORDS = 6;

export function createLiveBuffer(cpus: number): SharedArrayBuffer {
  return new SharedArrayBuffer(4 * (LIVE_HEADER + cpus * LANE_WORDS + LOG_ENTRIES * LOG_WORDS));
}

export interface LogEntry {
  index: number;
  kind: LiveEventKind;
  /** -1: the host (a reset, a dump) */
  cpu: number;
  slot: number;
  generation: number;
  ms: number;
}

export interface LaneView {
  state: number;
  slot: number;
  generation: number;
  /** records written on this CPU so far (the last RECENT of them are in `recent`) */
  count: number;
  /** most recent first: REC type, slot (-1 fallback, -2 bypass), generation, stack */
  recent: { type: number; slot: number; generation: number; stack: number }[];
}

export class Live {
  readonly i32: Int32Array;
  private readonly logAt: number;

  constructor(
    readonly sab: SharedArrayBuffer,
    readonly cpus: number,
    /** performance.timeOrigin + performance.now() at the run's start */
    private readonly t0: number,
  ) {
    this.i32 = new Int32Array(sab);
    this.logAt = LIVE_HEADER + cpus * LANE_WORDS;
  }

  private lane(cpu: number): number {
    return LIVE_HEADER + cpu * LANE_WORDS;
  }

  /** Counts the event and, unless it is a quiet one, logs it. */
  event(kind: LiveEventKind, cpu: number, slot: number, generation: number): void {
    const k = KIND_INDEX.get(kind)!;
    Atomics.add(this.i32, 1 + k, 1);
    if (QUIET.has(kind)) return;
    const index = Atomics.add(this.i32, 0, 1);
    const at = this.logAt + (index % LOG_ENTRIES) * LOG_WORDS;
    Atomics.store(this.i32, at, 0);
    Atomics.store(this.i32, at + 1, k);
    Atomics.store(this.i32, at + 2, cpu);
    Atomics.store(this.i32, at + 3, slot);
    Atomics.store(this.i32, at + 4, generation);
    Atomics.store(this.i32, at + 5, Math.round(performance.timeOrigin + performance.now() - this.t0));
    Atomics.store(this.i32, at, index + 1);
  }

  setState(cpu: number, state: number, slot: number, generation: number): void {
    const at = this.lane(cpu);
    Atomics.store(this.i32, at, state);
    Atomics.store(this.i32, at + 1, slot);
    Atomics.store(this.i32, at + 2, generation);
  }

  record(cpu: number, type: number, slot: number, generation: number, stack: number): void {
    const at = this.lane(cpu);
    const n = Atomics.load(this.i32, at + 3);
    const r = at + 4 + (n % RECENT) * 4;
    Atomics.store(this.i32, r, type);
    Atomics.store(this.i32, r + 1, slot);
    Atomics.store(this.i32, r + 2, generation);
    Atomics.store(this.i32, r + 3, stack);
    Atomics.store(this.i32, at + 3, n + 1);
  }

  total(kind: LiveEventKind): number {
    return Atomics.load(this.i32, 1 + KIND_INDEX.get(kind)!);
  }

  totals(): Record<LiveEventKind, number> {
    const out = {} as Record<LiveEventKind, number>;
    for (const k of EVENT_KINDS) out[k] = this.total(k);
    return out;
  }

  get logged(): number {
    return Atomics.load(this.i32, 0);
  }

  /**
   * Log entries from index `from` on (at most the last LOG_ENTRIES), and the next index to ask for.
   * An entry whose writer has taken its index but not yet published it ends the read there, and
   * the next read starts at it: a writer descheduled between the two (a loaded machine) must not
   * lose its entry, as it did when the read skipped it. Only an entry overwritten by a later one
   * (seq past its index), or one still unpublished while LOG_ENTRIES / 2 newer ones were logged
   * (its writer gone), is skipped and counted.
   */
  readLog(from: number): { entries: LogEntry[]; next: number; skipped: number } {
    const end = this.logged;
    const start = Math.max(from, end - LOG_ENTRIES);
    const entries: LogEntry[] = [];
    let skipped = start - from;
    for (let index = start; index < end; index++) {
      const at = this.logAt + (index % LOG_ENTRIES) * LOG_WORDS;
      const seq = Atomics.load(this.i32, at);
      if (seq !== index + 1) {
        if (seq < index + 1 && end - index < LOG_ENTRIES / 2) return { entries, next: index, skipped };
        skipped++;
        continue;
      }
      entries.push({
        index,
        kind: EVENT_KINDS[Atomics.load(this.i32, at + 1)],
        cpu: Atomics.load(this.i32, at + 2),
        slot: Atomics.load(this.i32, at + 3),
        generation: Atomics.load(this.i32, at + 4),
        ms: Atomics.load(this.i32, at + 5),
      });
    }
    return { entries, next: end, skipped };
  }

  laneView(cpu: number): LaneView {
    const at = this.lane(cpu);
    const n = Atomics.load(this.i32, at + 3);
    const recent: LaneView['recent'] = [];
    for (let j = 1; j <= Math.min(n, RECENT); j++) {
      const r = at + 4 + ((n - j) % RECENT) * 4;
      recent.push({ type: this.i32[r], slot: this.i32[r + 1], generation: this.i32[r + 2], stack: this.i32[r + 3] });
    }
    return { state: Atomics.load(this.i32, at), slot: Atomics.load(this.i32, at + 1), generation: Atomics.load(this.i32, at + 2), count: n, recent };
  }
}
