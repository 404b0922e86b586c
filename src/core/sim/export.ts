import { writeSimLedger, type LedgerRecordOut } from '../formats/sim-ledger.ts';
import { writeStackMapBin, writeStackMapStat, writeStackMapText } from '../formats/stack-map-write.ts';
import { writeTraceText, type TraceTextItem } from '../formats/trace-text-write.ts';
import { kmemFields, traceDatOf } from './export-trace-dat.ts';
import { wordsToIps } from './map-layout.ts';
import { CTX, REC } from './ring.ts';
import type { RunResult, TraceItem } from './sim-report.ts';
import { commOf } from './kernel-symbols.ts';
import { RESET_MARKER } from '../formats/event-line.ts';
import { outerEvent, withResetMarks } from './reset-marks.ts';

/** How the capture's trace is written: ftrace's text (`trace`) or trace-cmd's binary (`trace.dat`). */
export type TraceFormat = 'text' | 'trace-dat';

/**
 * A run as the files a user would copy off the device, by tracefs name, in the order the
 * dumps were taken (which the ledger also follows):
 *   trace                     what is left in the ring buffers, CPUs merged by time: events
 *                             (kmem_cache_alloc), then `<stack_id N>` (v4/v7),
 *                             `<stack_id N gen G>` (v8) or `<stack trace>` + ` => sym+0xoff/0xsize` frames
 *   trace.dat                 instead of `trace` with `format` 'trace-dat': the same records as
 *                             trace-cmd would save them (export-trace-dat.ts)
 *   stack_map_bin.N[.genG]    every binary dump (v1 for v4/v7, v2 with the generation for v8)
 *   stack_map                 the text dump read at the end (v7 or v8 format)
 *   stack_map_stat            v7 keys (entries, table_size, successes, drops, success_rate) for
 *                             v4/v7; v8 keys (generation, entries, capacity, successes, fallbacks)
 *   kallsyms                  the synthetic kernel's symbols
 *   ledger.json               each stack record's truth (below)
 *
 * Both traces also hold the host's `stackmap reset N` trace_marker writes (RESET_MARKER), as
 * scripts/capture.sh writes them before each reset, on CPU 0's ring: those its ring still holds
 * (reset-marks.ts); in trace.dat as ftrace `print` events, as `trace-cmd record` saves them.
 */
export function exportCapture(run: RunResult, format: TraceFormat = 'text'): Map<string, Uint8Array> {
  const enc = new TextEncoder();
  const kernel = run.population.kernel;
  const cache = new Map<bigint, string>();
  const print = (ip: bigint) => {
    let s = cache.get(ip);
    if (s === undefined) cache.set(ip, (s = kernel.printFrame(ip)));
    return s;
  };
  const v8 = run.config.mode === 'v8';
  const files = new Map<string, Uint8Array>();
  if (format === 'trace-dat') files.set('trace.dat', traceDatOf(run));
  else {
    const items: TraceTextItem[] = [];
    for (const { cpu, rec } of run.items) {
      const base = { comm: commOf(rec.pid), pid: rec.pid, cpu, ts: rec.ts };
      if (rec.type === REC.EVENT) {
        const k = kmemFields(run, rec);
        const callSite = print(k.callSite).replace(/\/0x[0-9a-f]+.*$/, '');
        const payload =
          `call_site=${callSite} ptr=0x${k.ptr.toString(16)} bytes_req=${k.bytesReq} ` +
          `bytes_alloc=${k.bytesAlloc} gfp_flags=${k.gfpKernel ? 'GFP_KERNEL' : 'GFP_ATOMIC'} node=-1 accounted=false`;
        items.push({ type: 'event', ...base, tgid: null, flags: flagsOf(rec.context), name: 'kmem_cache_alloc', payload });
      } else if (rec.type === REC.FULL) {
        const frames = Array.from(wordsToIps(rec.words!, 0, rec.a), print);
        items.push({ type: 'stack', kind: 'full', ...base, flags: flagsOf(rec.context), slot: 0, generation: null, frames });
      } else {
        items.push({
          type: 'stack',
          kind: 'cookie',
          ...base,
          flags: flagsOf(rec.context),
          slot: rec.a,
          generation: rec.type === REC.COOKIE ? rec.b : null,
          frames: null,
        });
      }
    }
    files.set(
      'trace',
      enc.encode(
        writeTraceText(
          withResetMarks(
            items,
            run,
            (it) => ({
              ts: it.type === 'lost' ? NaN : it.ts,
              cpu: it.cpu,
              event: it.type === 'event' && it.flags === flagsOf(CTX.PROCESS),
              lost: it.type === 'lost',
            }),
            mark,
          ),
          { tracer: 'nop', cpus: run.config.cpus },
        ),
      ),
    );
  }
  let n = 0;
  for (const d of run.dumps) {
    n++;
    if (d.format === 'bin') {
      const name = `stack_map_bin.${n}` + (d.generation === null ? '' : `.gen${d.generation}`);
      files.set(name, d.bytes ?? writeStackMapBin({ version: v8 ? 2 : 1, generation: d.generation, littleEndian: true, records: d.records }));
    } else {
      const text = writeStackMapText(
        d.records.map((r) => ({ slot: r.slot, generation: r.generation, refCount: r.refCount, frames: Array.from(r.ips, print) })),
        { version: v8 ? 'v8' : 'v7', generation: d.generation },
      );
      files.set(`stack_map.${n}`, enc.encode(d.uninitialized ? 'stackmap not initialized\n' : text));
    }
  }
  const c = run.stat;
  const capacity = 2 ** run.config.bits;
  const stat = v8
    ? writeStackMapStat({ version: 'v8', generation: run.finalGeneration, entries: run.entries, capacity, successes: c.successes, fallbacks: c.drops })
    : writeStackMapStat({
        version: 'v7',
        entries: run.entries,
        capacity,
        tableSize: capacity * 2,
        successes: c.successes,
        drops: c.drops,
        successRate: c.successes + c.drops ? Math.floor((100 * c.successes) / (c.successes + c.drops)) : 0,
      });
  files.set('stack_map_stat', enc.encode(run.allocated ? stat : 'stackmap not initialized\n'));
  files.set('kallsyms', enc.encode(kernel.kallsyms()));
  files.set('ledger.json', ledgerFile(run, format));
  return files;
}

/**
 * ledger.json (DESIGN 5.4, 5.5): each stack record's truth in the trace's order, which the explorer
 * reads beside the capture (core/capture/sim-truth.ts). The ledger's entries are the stack records
 * of `run.items` in order, the order the trace is written in.
 */
export function ledgerFile(run: RunResult, format: TraceFormat = 'text'): Uint8Array {
  const { records, stacks } = ledgerRows(run, format);
  return writeSimLedger(run.config.mode, records, stacks);
}

/**
 * The ledger's records and their stacks table (frame keys, leaf first). A record's `event` is
 * counted as the explorer numbers `events.event_id` (core/capture/trace-columns.ts): the trace's
 * events in file order, the host's reset marks among them (reset-marks.ts), and a stack record's
 * event the last one before it on its CPU (null when none: an orphan). File order is the text
 * trace's (CPUs merged by time) or the trace.dat's (each CPU's records in turn, CPU 0 first, by
 * time in nanoseconds, as write.ts lays them out).
 */
export function ledgerRows(run: RunResult, format: TraceFormat = 'text'): { records: LedgerRecordOut[]; stacks: string[][] } {
  const records: LedgerRecordOut[] = [];
  const stacks: string[][] = [];
  const index = new Map<string, number>();
  const stackOf = (key: string) => {
    let i = index.get(key);
    if (i === undefined) {
      index.set(key, (i = stacks.length));
      stacks.push(framesOfKey(run, key));
    }
    return i;
  };
  const marked = withResetMarks<Marked>(
    run.items,
    run,
    (it) => ('markTs' in it ? { ts: it.markTs, cpu: 0, event: true, lost: false } : { ts: it.rec.ts, cpu: it.cpu, event: outerEvent(it.rec), lost: false }),
    (m) => ({ markTs: m.ts }),
  );
  const eventOf = trueEvents(marked, format === 'trace-dat' ? datEventOrder(marked) : textEventOrder(marked));
  let k = 0;
  marked.forEach((it, i) => {
    if ('markTs' in it || it.rec.type === REC.EVENT) return;
    const { cpu, rec } = it;
    const e = run.ledger.entries[k++];
    records.push({
      cpu,
      ts: rec.ts,
      kind: rec.type === REC.FULL ? 'full' : rec.type === REC.COOKIE ? 'cookie' : 'id',
      slot: rec.type === REC.FULL ? -1 : rec.a,
      generation: rec.type === REC.FULL ? -1 : rec.truthGeneration,
      stack: rec.truthStack,
      event: eventOf[i] < 0 ? null : eventOf[i],
      trueStack: stackOf(run.stackKeys[rec.truthStack]),
      resolvedTo: e.resolved === null ? null : stackOf(e.resolved),
      outcome: e.outcome,
    });
  });
  return { records, stacks };
}

/** a trace item, or a host's reset mark (an event on CPU 0) */
type Marked = TraceItem | { markTs: number };
const isEvent = (it: Marked) => 'markTs' in it || it.rec.type === REC.EVENT;
const cpuOf = (it: Marked) => ('markTs' in it ? 0 : it.cpu);

/**
 * The latency flags a record is printed with, by the context it was written in (CTX): the CPU's
 * own path at preempt depth 1; an IRQ (irqs off, hardirq); an NMI; an NMI inside an IRQ. An event
 * and its stack record share them, as they share trace_ctx in the kernel, so a reader can give each
 * stack record to its own event under nesting (formats/types.ts contextOf).
 */
const FLAGS = ['...1.', 'd.h1.', 'd.z1.', 'd.Z1.'];
const flagsOf = (context: number) => FLAGS[context] ?? FLAGS[0];

/** Each event item's index in the text trace's file order (reset marks among them), -1 for a stack record. */
function textEventOrder(marked: readonly Marked[]): Int32Array {
  const out = new Int32Array(marked.length).fill(-1);
  let events = 0;
  marked.forEach((it, i) => {
    if (isEvent(it)) out[i] = events++;
  });
  return out;
}

/** The same for the trace.dat: each CPU's items in turn, CPU 0 first, each CPU's stably sorted by nanoseconds (write.ts). */
function datEventOrder(marked: readonly Marked[]): Int32Array {
  const out = new Int32Array(marked.length).fill(-1);
  const byCpu = new Map<number, number[]>();
  marked.forEach((it, i) => {
    const c = cpuOf(it);
    let l = byCpu.get(c);
    if (!l) byCpu.set(c, (l = []));
    l.push(i);
  });
  // as export-trace-dat.ts writes the times
  const ns = (i: number) => {
    const it = marked[i];
    return Math.round(('markTs' in it ? it.markTs : it.rec.ts) * 1e9);
  };
  let events = 0;
  for (const c of [...byCpu.keys()].sort((a, b) => a - b)) {
    const l = byCpu.get(c)!;
    const key = l.map(ns);
    const order = l.map((_, k) => k).sort((a, b) => key[a] - key[b] || a - b);
    for (const k of order) if (isEvent(marked[l[k]])) out[l[k]] = events++;
  }
  return out;
}

/**
 * Per item, a stack record's own event's index in the file (`order`): the event it was written
 * for, as the simulation knows it (the record's truthEvent, that event's sequence number on its
 * CPU), -1 where the ring no longer holds that event (an orphan) and for events.
 */
function trueEvents(marked: readonly Marked[], order: Int32Array): Int32Array {
  const bySeq = new Map<number, Map<number, number>>();
  marked.forEach((it, i) => {
    if ('markTs' in it || it.rec.type !== REC.EVENT) return;
    let m = bySeq.get(it.cpu);
    if (!m) bySeq.set(it.cpu, (m = new Map()));
    m.set(it.rec.truthEvent, order[i]);
  });
  const out = new Int32Array(marked.length).fill(-1);
  marked.forEach((it, i) => {
    if ('markTs' in it || it.rec.type === REC.EVENT) return;
    out[i] = bySeq.get(it.cpu)?.get(it.rec.truthEvent) ?? -1;
  });
  return out;
}

/** A stack's frame keys (sym+0xoff, leaf first) from its key in the ledger (stackKey: the ips in hex). */
export function framesOfKey(run: RunResult, key: string): string[] {
  return key === ''
    ? []
    : frameKeysOf(
        run,
        BigUint64Array.from(key.split(','), (h) => BigInt('0x' + h)),
      );
}

/** Frame keys of a stack as the explorer derives them from printed frames (sym+0xoff). */
export function frameKeysOf(run: RunResult, ips: BigUint64Array): string[] {
  const k = run.population.kernel;
  return Array.from(ips, (ip) => k.printFrame(ip).replace(/\/0x[0-9a-f]+.*$/, ''));
}

function mark(m: { ts: number; n: number }): TraceTextItem {
  return { type: 'event', comm: 'sh', pid: 1, tgid: null, cpu: 0, ts: m.ts, flags: '.....', name: '', payload: `tracing_mark_write: ${RESET_MARKER} ${m.n}` };
}
