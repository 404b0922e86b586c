import type { Diagnostic } from '../formats/diagnostics.ts';
import { OwnRows } from './own-rows.ts';
import type { Capture } from './ingest.ts';
import type { Warning } from './warning.ts';

/**
 * Segments (DESIGN 3): the capture's disjoint time ranges. Two trace files taken days apart, or
 * the snippets of several runs quoted in one prose file, are unrelated: one linear timeline over
 * them would be millions of seconds of nothing with the events squeezed into a few pixels, and a
 * generation's span or an event rate taken across them would mean nothing.
 *
 * - Within a file, in file order, a new snippet starts at a timestamp more than SNIPPET_GAP
 *   times the snippet's span so far after its last timestamp (a span under MIN_SPAN counts as
 *   MIN_SPAN, so no gap under SNIPPET_GAP x MIN_SPAN = 10 s splits a capture: periodic events
 *   seconds apart stay together), or more than those 10 s before its first (a trace's timestamps
 *   only step back by the skew between CPUs; a prose file quoting an earlier run jumps back).
 * - Snippets of any files whose time ranges overlap (or touch) are one segment: per-CPU files of
 *   one capture belong together. Two files that overlap on the same CPU are probably the same
 *   capture twice: that is reported (a diagnostic, and a warning).
 * - Segments are in time order; every event and stack record lies in exactly one.
 */
export const SNIPPET_GAP = 100;
export const MIN_SPAN = 0.1;

export interface Segment {
  index: number;
  /** the trace file; several joined by ", " when their time ranges overlap */
  file: string;
  files: string[];
  /** first and last timestamp of its events and stack records */
  firstTs: number;
  lastTs: number;
  /** event lines (not counting stack records), as `events` of the summary counts them */
  events: number;
  records: number;
  /** how many snippets (runs of one file) it joins */
  snippets: number;
  cpus: number[];
  /** events / (lastTs - firstTs); null for a segment of one instant */
  eventsPerSecond: number | null;
}

/** Two trace files whose events on one CPU overlap in time. */
export interface SegmentOverlap {
  files: [string, string];
  cpus: number[];
  firstTs: number;
  lastTs: number;
}

export interface SegmentReport {
  segments: Segment[];
  overlaps: SegmentOverlap[];
  /** one per overlapping pair of files */
  diagnostics: Diagnostic[];
}

interface Piece {
  file: number;
  first: number;
  last: number;
  events: number;
  records: number;
  /** cpu -> [min ts, max ts] */
  cpu: Map<number, [number, number]>;
  /** the same ranges for CPUs 0..1023, by CPU (no Map lookup per event) */
  small: ([number, number] | undefined)[];
}

/** Whether `ts` opens a new snippet after one spanning [lo, hi]. */
export function breaksSnippet(lo: number, hi: number, ts: number): boolean {
  if (ts < lo) return lo - ts > SNIPPET_GAP * MIN_SPAN;
  return ts - hi > SNIPPET_GAP * Math.max(hi - lo, MIN_SPAN);
}

const cache = new WeakMap<Capture, SegmentReport>();

/** The capture's segments (computed once per capture). */
export function segmentsOf(c: Capture): SegmentReport {
  let r = cache.get(c);
  if (!r) cache.set(c, (r = findSegments(c)));
  return r;
}

/** Names of the trace files in the order they were read, made distinct ("trace", "trace #2"). */
function traceFileNames(c: Capture): string[] {
  const starts = c.trace.fileStarts;
  const reports = c.files.filter((f) => f.kind === 'trace_text' || f.kind === 'systrace_html').map((f) => f.file);
  const names = starts.map((s, i) => s.file ?? (reports.length === starts.length ? reports[i] : `trace file ${i + 1}`));
  const seen = new Map<string, number>();
  return names.map((n) => {
    const k = (seen.get(n) ?? 0) + 1;
    seen.set(n, k);
    return k === 1 ? n : `${n} #${k}`;
  });
}

/** A piece's range on `cpu` widened to `ts`. */
function widen(p: Piece, ts: number, cpu: number): void {
  if (ts < p.first) p.first = ts;
  if (ts > p.last) p.last = ts;
  const small = cpu >= 0 && cpu < 1024;
  const r = small ? p.small[cpu] : p.cpu.get(cpu);
  if (!r) {
    const range: [number, number] = [ts, ts];
    p.cpu.set(cpu, range);
    if (small) p.small[cpu] = range;
  } else {
    if (ts < r[0]) r[0] = ts;
    if (ts > r[1]) r[1] = ts;
  }
}

/**
 * The snippets of file `f` (its events [e0, e1) and records [r0, r1)), a function of its own (a
 * summary runs it once: a small function is optimized within its loops, a large one later). A
 * snippet holds the events from the one that opened it to the next one's first, those with a time
 * (`starts`: each snippet's first event); a record joins its event's, found by a cursor (records
 * come in their events' order) or a binary search, with no column of every event's snippet (19 MB
 * at a 1 GiB trace's 4.8M events, filled, written and read at each record).
 */
function fileSnippets(a: {
  f: number;
  e0: number;
  e1: number;
  r0: number;
  r1: number;
  evTs: Float64Array;
  evCpu: ArrayLike<number>;
  /** the records that keep their own time and CPU, walked by the loops over records of a file of stack records only and of any file (one walker each, over every file in order), and those; every other record's are its event's */
  ownOnly: OwnRows;
  ownJoin: OwnRows;
  ownTs: Float64Array;
  ownCpu: Int32Array;
  recEvent: Int32Array;
}): Piece[] {
  const { f, e0, e1, r0, r1, evTs, evCpu, ownOnly, ownJoin, ownTs, ownCpu, recEvent } = a;
  const mine: Piece[] = [];
  const starts: number[] = [];
  let cur: Piece | null = null;
  // snippets by the events in file order; a file of stack records only, by its records
  const byEvents = e1 > e0;
  const n0 = byEvents ? e0 : r0;
  const n1 = byEvents ? e1 : r1;
  for (let i = n0; i < n1; i++) {
    let x: number;
    let cpu: number;
    // a record's time and CPU: its own row's, else its event's
    const o = byEvents ? -1 : ownOnly.rowOf(i);
    if (byEvents) {
      x = evTs[i];
      cpu = evCpu[i];
    } else if (o >= 0) {
      x = ownTs[o];
      cpu = ownCpu[o];
    } else {
      x = evTs[recEvent[i]];
      cpu = evCpu[recEvent[i]];
    }
    if (!Number.isFinite(x)) continue;
    if (cur === null || breaksSnippet(cur.first, cur.last, x)) {
      mine.push((cur = { file: f, first: x, last: x, events: 0, records: 0, cpu: new Map(), small: [] }));
      starts.push(i);
    }
    widen(cur, x, cpu);
    if (byEvents) cur.events++;
    else cur.records++;
  }
  if (byEvents) {
    // a stack record joins the snippet of the event it belongs to (an event of the file with a
    // time: in some snippet); an orphan, the nearest in time
    let k = 0;
    for (let r = r0; r < r1; r++) {
      const o = ownJoin.rowOf(r);
      const e = recEvent[r];
      const x = o >= 0 ? ownTs[o] : evTs[e];
      if (!Number.isFinite(x) || mine.length === 0) continue;
      const ofEvent = e >= e0 && e < e1 && e >= starts[0] && Number.isFinite(evTs[e]);
      if (ofEvent) k = snippetOf(starts, e, k);
      const piece = mine[ofEvent ? k : nearest(mine, x)];
      piece.records++;
      // a record with its event's time and CPU widens nothing its event did not
      if (o >= 0) {
        const cpu = ownCpu[o];
        if (!ofEvent || x !== evTs[e] || cpu !== evCpu[e]) widen(piece, x, cpu);
      } else if (!ofEvent) widen(piece, x, evCpu[e]);
    }
  }
  return mine;
}

export function findSegments(c: Capture): SegmentReport {
  const t = c.trace;
  const evTs = t.evTs.raw();
  const evCpu = t.evCpu.raw();
  const ownOnly = new OwnRows(t.ownRec.raw());
  const ownJoin = new OwnRows(t.ownRec.raw());
  const ownTs = t.ownTs.raw();
  const ownCpu = t.ownCpu.raw();
  const recEvent = t.recEvent.raw();
  const names = traceFileNames(c);
  // a capture built without sinks (none in practice) is one file
  const starts = t.fileStarts.length ? t.fileStarts : [{ file: null, events: 0, records: 0 }];
  if (!t.fileStarts.length) names.push('trace');
  const pieces: Piece[] = [];

  for (let f = 0; f < starts.length; f++) {
    const e0 = starts[f].events;
    const e1 = f + 1 < starts.length ? starts[f + 1].events : evTs.length;
    const r0 = starts[f].records;
    const r1 = f + 1 < starts.length ? starts[f + 1].records : recEvent.length;
    pieces.push(...fileSnippets({ f, e0, e1, r0, r1, evTs, evCpu, ownOnly, ownJoin, ownTs, ownCpu, recEvent }));
  }

  // snippets whose ranges overlap or touch are one segment
  const order = pieces.map((_, i) => i).sort((a, b) => pieces[a].first - pieces[b].first || a - b);
  const groups: number[][] = [];
  let last = -Infinity;
  for (const i of order) {
    const p = pieces[i];
    if (groups.length && p.first <= last) {
      groups[groups.length - 1].push(i);
      if (p.last > last) last = p.last;
    } else {
      groups.push([i]);
      last = p.last;
    }
  }

  const segments: Segment[] = groups.map((g, index) => {
    const fileIdx = [...new Set(g.map((i) => pieces[i].file))].sort((a, b) => a - b);
    const files = fileIdx.map((f) => names[f]);
    let first = Infinity;
    let lastTs = -Infinity;
    let events = 0;
    let records = 0;
    const cpus = new Set<number>();
    for (const i of g) {
      const p = pieces[i];
      first = Math.min(first, p.first);
      lastTs = Math.max(lastTs, p.last);
      events += p.events;
      records += p.records;
      for (const cpu of p.cpu.keys()) cpus.add(cpu);
    }
    const span = lastTs - first;
    return {
      index,
      file: files.join(', '),
      files,
      firstTs: first,
      lastTs,
      events,
      records,
      snippets: g.length,
      cpus: [...cpus].sort((a, b) => a - b),
      eventsPerSecond: span > 0 ? events / span : null,
    };
  });

  // the same CPU's events in two files at the same time: the same capture twice, most likely
  const pairs = new Map<string, SegmentOverlap>();
  for (const g of groups) {
    for (let a = 0; a < g.length; a++) {
      for (let b = a + 1; b < g.length; b++) {
        let pa = pieces[g[a]];
        let pb = pieces[g[b]];
        if (pa.file === pb.file) continue;
        if (pa.file > pb.file) [pa, pb] = [pb, pa];
        for (const [cpu, ra] of pa.cpu) {
          const rb = pb.cpu.get(cpu);
          if (!rb) continue;
          const lo = Math.max(ra[0], rb[0]);
          const hi = Math.min(ra[1], rb[1]);
          if (lo > hi) continue;
          const key = `${pa.file}:${pb.file}`;
          let o = pairs.get(key);
          if (!o) pairs.set(key, (o = { files: [names[pa.file], names[pb.file]], cpus: [], firstTs: lo, lastTs: hi }));
          if (!o.cpus.includes(cpu)) o.cpus.push(cpu);
          o.firstTs = Math.min(o.firstTs, lo);
          o.lastTs = Math.max(o.lastTs, hi);
        }
      }
    }
  }
  const overlaps = [...pairs.values()];
  for (const o of overlaps) o.cpus.sort((x, y) => x - y);
  const diagnostics: Diagnostic[] = overlaps.map((o) => ({
    file: o.files[1],
    where: 'file',
    message: overlapMessage(o),
    count: 1,
  }));
  return { segments, overlaps, diagnostics };
}

export function overlapMessage(o: SegmentOverlap): string {
  const cpus = o.cpus.length === 1 ? `CPU ${o.cpus[0]}` : `CPUs ${o.cpus.join(', ')}`;
  return (
    `overlaps ${o.files[0]} in time on ${cpus} (${o.firstTs.toFixed(6)} to ${o.lastTs.toFixed(6)} s): ` +
    'probably the same capture loaded twice, so its events are counted twice; load one of them'
  );
}

const int = (n: number) => n.toLocaleString('en-US');

/** What the segments tell the user: files that overlap (warn), and a capture of unrelated time ranges (info). */
export function segmentWarnings(segments: readonly Segment[], overlaps: readonly SegmentOverlap[]): Warning[] {
  const out: Warning[] = overlaps.map((o) => ({ level: 'warn', id: 'overlapping-traces', message: `${o.files[1]} ${overlapMessage(o)}.` }));
  if (segments.length > 1) {
    const files = new Set(segments.flatMap((s) => s.files)).size;
    out.push({
      level: 'info',
      id: 'segments',
      message:
        `The trace holds ${int(segments.length)} unrelated time ranges (segments), from ${files === 1 ? 'one file' : `${int(files)} files`}, ` +
        'far apart in time: the timeline lays them side by side with a break between them, and generation spans and rates are ' +
        'counted within each. Counts and stacks are over all of them: click a segment above the timeline to select it alone.',
    });
  }
  return out;
}

/**
 * The snippet holding event `e` (at least the first one's start): the last whose start is at most
 * `e`. Snippet `k` (the last record's) or, past or before it, a binary search: records come in
 * their events' order, so the search runs once a snippet, and no order of them costs more.
 */
function snippetOf(starts: number[], e: number, k: number): number {
  const n = starts.length;
  const after = starts[k] <= e;
  if (after && (k + 1 === n || starts[k + 1] > e)) return k;
  let lo = after ? k + 1 : 0;
  let hi = after ? n - 1 : k - 1;
  while (lo < hi) {
    const mid = (lo + hi + 1) >> 1;
    if (starts[mid] <= e) lo = mid;
    else hi = mid - 1;
  }
  return lo;
}

function nearest(ps: Piece[], ts: number): number {
  let best = 0;
  let bestD = Infinity;
  for (let i = 0; i < ps.length; i++) {
    const p = ps[i];
    const d = ts < p.first ? p.first - ts : ts > p.last ? ts - p.last : 0;
    if (d < bestD) {
      bestD = d;
      best = i;
    }
  }
  return best;
}

/**
 * The segment holding `ts` (-1 when none does): segments are disjoint and in time order, so a
 * binary search over their first timestamps.
 */
export function segmentAt(segments: readonly Pick<Segment, 'firstTs' | 'lastTs'>[], ts: number): number {
  let lo = 0;
  let hi = segments.length - 1;
  let k = -1;
  while (lo <= hi) {
    const mid = (lo + hi) >> 1;
    if (segments[mid].firstTs <= ts) {
      k = mid;
      lo = mid + 1;
    } else hi = mid - 1;
  }
  return k >= 0 && ts <= segments[k].lastTs ? k : -1;
}
