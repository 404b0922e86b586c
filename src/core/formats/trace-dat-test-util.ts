/**
 * Test helpers for the trace.dat readers: a sink that keeps what it gets, a read at a chunk size,
 * trace-cmd (the second method) when installed, and its `report` lines parsed.
 */
import { execFileSync, spawnSync } from 'node:child_process';
import { DiagnosticLog } from './diagnostics.ts';
import { feedChunks, feedCuts } from './test-util.ts';
import { createTraceDatParser, type TraceDatResult } from './trace-dat.ts';
import type { TraceEvent, TraceLost, TraceSink, TraceStackRecord } from './types.ts';

export interface Got {
  events: TraceEvent[];
  stacks: TraceStackRecord[];
  lost: TraceLost[];
  /** events, stacks and lost markers in the order the sink got them */
  order: string[];
}

export function collector(): { sink: TraceSink; got: Got } {
  const got: Got = { events: [], stacks: [], lost: [], order: [] };
  const sink: TraceSink = {
    event: (e) => {
      got.events.push({ ...e });
      got.order.push(`e ${e.cpu} ${e.ts} ${e.pid} ${e.name} ${e.payload}`);
    },
    stackRecord: (r) => {
      got.stacks.push({ ...r });
      got.order.push(`s ${r.cpu} ${r.ts} ${r.pid} ${r.frames!.join(',')}`);
    },
    lost: (l) => {
      got.lost.push({ ...l });
      got.order.push(`l ${l.cpu} ${l.count}`);
    },
  };
  return { sink, got };
}

export function readDat(bytes: Uint8Array, size: number | number[]): { r: TraceDatResult; got: Got; log: DiagnosticLog } {
  const log = new DiagnosticLog('t.dat');
  const { sink, got } = collector();
  const p = createTraceDatParser({ file: 't.dat', diagnostics: log }, sink);
  const r = typeof size === 'number' ? feedChunks(p, bytes, size) : feedCuts(p, bytes, size);
  return { r, got, log };
}

/** Whether trace-cmd runs here (CI installs it; a machine without it skips those tests). */
export const hasTraceCmd = (() => {
  const r = spawnSync('trace-cmd', ['list', '-c'], { stdio: 'ignore' });
  return r.error === undefined && r.status === 0;
})();

export function traceCmd(args: string[]): string {
  try {
    return execFileSync('trace-cmd', args, { encoding: 'utf8', maxBuffer: 1 << 28, stdio: ['ignore', 'pipe', 'ignore'] });
  } catch (e) {
    throw new Error(`trace-cmd ${args[0]} failed (${(e as Error).message}): install Debian's trace-cmd (apt-get install trace-cmd); this test needs it as its second method`);
  }
}

export interface ReportLine {
  comm: string;
  pid: number;
  cpu: number;
  /** as printed (6 decimals) */
  ts: string;
  name: string;
  /** the text after `name:` and its padding */
  text: string;
}

/** The event lines of `trace-cmd report` (`comm-pid [cpu] ts: name: text`). */
export function reportLines(file: string): ReportLine[] {
  const out: ReportLine[] = [];
  for (const line of traceCmd(['report', '-i', file]).split('\n')) {
    const m = /^\s*(.+?)-(\d+)\s+\[(\d+)\]\s+(?:\S+\s+)?(\d+\.\d+):\s+([\w-]+):\s*(.*)$/.exec(line);
    if (m) out.push({ comm: m[1], pid: +m[2], cpu: +m[3], ts: m[4], name: m[5], text: m[6] });
  }
  return out;
}

export const bump = (m: Map<string, number>, k: string) => m.set(k, (m.get(k) ?? 0) + 1);
export const sorted = (m: Map<string, number>) => [...m].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
