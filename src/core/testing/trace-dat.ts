/**
 * Test helpers for the trace.dat readers: a sink that keeps what it gets, a read at a chunk size,
 * trace-cmd (the second method) when installed, and its `report` lines parsed.
 */
import { spawnSync } from 'node:child_process';
import { DiagnosticLog } from '../formats/diagnostics.ts';
import { feedChunks, feedCuts } from './formats.ts';
import { createTraceDatParser } from '../formats/trace-dat/trace-dat.ts';
import type { TraceDatResult } from '../formats/trace-dat/types.ts';
import type { TraceEvent, TraceLost, TraceSink, TraceStackRecord } from '../formats/types.ts';
import type { DatWriteOptions } from '../formats/trace-dat/write.ts';
import { writeTraceDatV7 } from '../formats/trace-dat/write-v7.ts';

export interface Got {
  events: TraceEvent[];
  stacks: TraceStackRecord[];
  lost: TraceLost[];
  /** events (`e`), full stacks (`s`), cookies (`c cpu ts pid slot generation`) and lost markers (`l`) in the order the sink got them */
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
      got.order.push(r.kind === 'cookie' ? `c ${r.cpu} ${r.ts} ${r.pid} ${r.slot} ${r.generation}` : `s ${r.cpu} ${r.ts} ${r.pid} ${r.frames!.join(',')}`);
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
  return traceCmdRun(args).stdout;
}

/** trace-cmd's stdout and stderr (what a check that found nothing in its output says). */
export function traceCmdRun(args: string[]): { stdout: string; stderr: string } {
  const r = spawnSync('trace-cmd', args, { encoding: 'utf8', maxBuffer: 1 << 28, stdio: ['ignore', 'pipe', 'pipe'] });
  if (r.error === undefined && r.status === 0) return { stdout: r.stdout, stderr: r.stderr };
  const why = r.error?.message ?? `exit ${r.status ?? r.signal}: ${(r.stderr ?? '').slice(-500)}`;
  throw new Error(`trace-cmd ${args[0]} failed (${why}): install Debian's trace-cmd (apt-get install trace-cmd); this test needs it as its second method`);
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

/**
 * The stdout of `trace-cmd report ARGS` (`args` after `report`), holding at least one event line:
 * a run that printed none is run once more (a fresh clone's CI saw one such run among seven, exit
 * status 0, and another in the text reader's comparison of the real trappy file); if that one
 * prints none either, this fails saying the head of its stdout and its stderr, unless
 * `mayBeEmpty` (a file trace-cmd reads no event of).
 */
export function reportText(args: string[], { mayBeEmpty = false }: { mayBeEmpty?: boolean } = {}): string {
  let run = traceCmdRun(['report', ...args]);
  if (anyEventLine(run.stdout)) return run.stdout;
  run = traceCmdRun(['report', ...args]);
  if (!anyEventLine(run.stdout) && !mayBeEmpty)
    throw new Error(
      `trace-cmd report ${args.join(' ')} printed no event line, twice: stdout ${JSON.stringify(run.stdout.slice(0, 400))}, stderr ${JSON.stringify(run.stderr.slice(-400))}`,
    );
  return run.stdout;
}

/** The event lines of `trace-cmd report -i file` (`comm-pid [cpu] ts: name: text`), through `reportText`. */
export function reportLines(file: string, opts: { mayBeEmpty?: boolean } = {}): ReportLine[] {
  return eventLines(reportText(['-i', file], opts));
}

/** Whether some line has a time and a name (`... 123.456789: name:`), in report's default format or its latency format (`-l`). */
function anyEventLine(stdout: string): boolean {
  for (const line of stdout.split('\n')) {
    const colon = line.indexOf(': ');
    if (colon < 0) continue;
    const ts = line.slice(line.lastIndexOf(' ', colon) + 1, colon);
    const dot = ts.indexOf('.');
    if (dot > 0 && /^\d+$/.test(ts.slice(0, dot)) && /^\d+$/.test(ts.slice(dot + 1))) return true;
  }
  return false;
}

function eventLines(stdout: string): ReportLine[] {
  const out: ReportLine[] = [];
  for (const line of stdout.split('\n')) {
    // COMM-PID is what stands before ` [CPU]`, the PID after its last dash: no lazy group to retry
    const open = line.indexOf(' [');
    const dash = open < 0 ? -1 : line.lastIndexOf('-', open);
    if (dash <= 0) continue;
    const m = /^(\d+)\s+\[(\d+)\]\s+(?:\S+\s+)?(\d+\.\d+):\s+([\w-]+):\s*(.*)$/.exec(line.slice(dash + 1));
    if (m) out.push({ comm: line.slice(0, dash).trim(), pid: +m[1], cpu: +m[2], ts: m[3], name: m[4], text: m[5] });
  }
  return out;
}

export const bump = (m: Map<string, number>, k: string) => m.set(k, (m.get(k) ?? 0) + 1);
export const sorted = (m: Map<string, number>) => [...m].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));

/** Events (read, or trace-cmd's report lines) counted by name and by CPU, each as sorted pairs. */
export function countByNameAndCpu(events: Iterable<{ name: string; cpu: number }>): { names: [string, number][]; cpus: [string, number][] } {
  const names = new Map<string, number>();
  const cpus = new Map<string, number>();
  for (const e of events) {
    bump(names, e.name);
    bump(cpus, String(e.cpu));
  }
  return { names: sorted(names), cpus: sorted(cpus) };
}

/** A single-segment zstd frame of `n` bytes `byte` in RLE blocks: 9 bytes of header and 4 per 128 KiB (the shape of a bomb). */
export function zstdRleFrame(n: number, byte = 0): Uint8Array {
  const out = [0x28, 0xb5, 0x2f, 0xfd, 0xa0, n & 255, (n >>> 8) & 255, (n >>> 16) & 255, n >>> 24];
  for (let o = 0; o < n; o += 1 << 17) {
    const k = Math.min(1 << 17, n - o);
    const h = (o + k >= n ? 1 : 0) | (1 << 1) | (k << 3);
    out.push(h & 255, (h >>> 8) & 255, (h >>> 16) & 255, byte);
  }
  return new Uint8Array(out);
}

/** A version 7 zstd file of `events` whose CPUs' data are `chunks` chunks each, every one 256 zero pages in a frame of 41 bytes. */
export function zstdBombDat(little: boolean, chunks: number, events: DatWriteOptions['events']): Uint8Array {
  const usize = 256 * 4096;
  const frame = zstdRleFrame(usize);
  return writeTraceDatV7({
    littleEndian: little,
    longSize: 8,
    cpus: 2,
    comms: [[7, 'seven']],
    events,
    compression: 'zstd',
    cpuData: () => {
      const b = new Uint8Array(4 + chunks * (8 + frame.length));
      const v = new DataView(b.buffer);
      v.setUint32(0, chunks, little);
      for (let i = 0; i < chunks; i++) {
        const at = 4 + i * (8 + frame.length);
        v.setUint32(at, frame.length, little);
        v.setUint32(at + 4, usize, little);
        b.set(frame, at + 8);
      }
      return b;
    },
  });
}
