import type { Diagnostic } from '../formats/diagnostics.ts';
import { hasStack } from './cookie-index.ts';
import { derive, type Derived } from './derived.ts';
import type { Capture, FileReport } from './ingest.ts';
import { segmentsOf, type Segment } from './segments.ts';
import { RecordKind, RecordStatus, STATUS_NAMES, type StatusName } from './trace-columns.ts';

export interface TopStack {
  count: number;
  /** frame keys, leaf first */
  frames: string[];
}

export interface StatSummary {
  /** 'v7' (drops, table_size, success_rate) or 'v8' (generation, capacity, fallbacks) */
  version: 'v7' | 'v8';
  /** the file it came from, and every key as read, unknown keys included */
  file: string;
  values: [string, string][];
  tableSize: number | null;
  successRate: number | null;
  entries: number | null;
  capacity: number | null;
  successes: number | null;
  drops: number | null;
  generation: number | null;
}

/** The command line's JSON (DESIGN 5.1); the page shows the same numbers. */
export interface Summary {
  events: number;
  cookies: number;
  fullStacks: number;
  resolved: number;
  unresolved: number;
  generations: number[];
  uniqueStacks: number;
  top: TopStack[];
  stat: StatSummary | null;
  status: Record<StatusName, number>;
  userStacks: number;
  lost: { markers: number; events: number };
  /** per-generation spans and coverage, dedup rate, ring-buffer bytes with and without the map */
  derived: Derived;
  /** the capture's disjoint time ranges (segments.ts), in time order */
  segments: Segment[];
  files: FileReport[];
  diagnostics: Diagnostic[];
}

export function summarize(c: Capture, topN = 10): Summary {
  const t = c.trace;
  const status = Object.fromEntries(STATUS_NAMES.map((s) => [s, 0])) as Record<StatusName, number>;
  let cookies = 0;
  let resolved = 0;
  const gens = new Set<number>(c.dumps.generations());
  const occurrences = new Map<number, number>();
  const firstSeen = new Map<number, number>();
  for (let i = 0; i < t.recordCount; i++) {
    const kind = t.recKind.get(i);
    const st = t.recStatus.get(i);
    status[STATUS_NAMES[st]]++;
    if (kind === RecordKind.CookieV7 || kind === RecordKind.CookieV8) {
      cookies++;
      if (kind === RecordKind.CookieV8) gens.add(t.recGen.get(i));
      if (!hasStack(st)) continue;
      resolved++;
    } else if (st !== RecordStatus.Full) continue;
    const stack = t.recStack.get(i);
    occurrences.set(stack, (occurrences.get(stack) ?? 0) + 1);
    if (!firstSeen.has(stack)) firstSeen.set(stack, i);
  }
  const top = [...occurrences.entries()]
    .sort((a, b) => b[1] - a[1] || firstSeen.get(a[0])! - firstSeen.get(b[0])!)
    .slice(0, topN)
    .map(([stack, count]) => ({ count, frames: c.stacks.framesOf(stack) }));
  const stat = c.stats.length ? c.stats[c.stats.length - 1] : null;
  let lostEvents = 0;
  for (let i = 0; i < t.lostCount.length; i++) lostEvents += Math.max(0, t.lostCount.get(i));
  return {
    events: t.eventCount,
    cookies,
    fullStacks: status.full,
    resolved,
    unresolved: cookies - resolved,
    generations: [...gens].sort((a, b) => a - b),
    uniqueStacks: c.stacks.size,
    top,
    stat: stat && {
      version: stat.version,
      file: stat.file,
      values: stat.values,
      tableSize: stat.tableSize,
      successRate: stat.successRate,
      entries: stat.entries,
      capacity: stat.capacity,
      successes: stat.successes,
      drops: stat.drops,
      generation: stat.generation,
    },
    status,
    userStacks: status.user,
    lost: { markers: t.lostCount.length, events: lostEvents },
    derived: derive(c),
    segments: segmentsOf(c).segments,
    files: c.files,
    // trace files that overlap on a CPU are reported here (segments.ts), like any reader's diagnostic
    diagnostics: [...c.diagnostics, ...segmentsOf(c).diagnostics],
  };
}
