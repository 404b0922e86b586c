import { writeTraceDatV7 } from '../formats/trace-dat/write-v7.ts';
import type { DatWriteEvent } from '../formats/trace-dat/write.ts';
import { commOf } from './kernel-symbols.ts';
import { wordsToIps } from './map-layout.ts';
import { REC, type RingRecord } from './ring.ts';
import type { RunResult, TraceItem } from './sim-report.ts';
import { outerEvent, withResetMarks, type ResetMark } from './reset-marks.ts';
import { RESET_MARKER } from '../formats/event-line.ts';

/** The ID of kmem_cache_alloc in the written file (the kernel assigns one per boot; readers go by the format). */
export const KMEM_CACHE_ALLOC_ID = 300;

/**
 * kmem:kmem_cache_alloc's format file as a 64-bit 6.x kernel writes it (tracefs
 * events/kmem/kmem_cache_alloc/format), its `print fmt` one that `trace-cmd report` evaluates:
 * gfp_flags as the two values the simulator uses.
 */
export const KMEM_CACHE_ALLOC_FORMAT = `name: kmem_cache_alloc
ID: ${KMEM_CACHE_ALLOC_ID}
format:
\tfield:unsigned short common_type;\toffset:0;\tsize:2;\tsigned:0;
\tfield:unsigned char common_flags;\toffset:2;\tsize:1;\tsigned:0;
\tfield:unsigned char common_preempt_count;\toffset:3;\tsize:1;\tsigned:0;
\tfield:int common_pid;\toffset:4;\tsize:4;\tsigned:1;

\tfield:unsigned long call_site;\toffset:8;\tsize:8;\tsigned:0;
\tfield:const void * ptr;\toffset:16;\tsize:8;\tsigned:0;
\tfield:size_t bytes_req;\toffset:24;\tsize:8;\tsigned:0;
\tfield:size_t bytes_alloc;\toffset:32;\tsize:8;\tsigned:0;
\tfield:unsigned long gfp_flags;\toffset:40;\tsize:8;\tsigned:0;
\tfield:int node;\toffset:48;\tsize:4;\tsigned:1;
\tfield:bool accounted;\toffset:52;\tsize:1;\tsigned:0;

print fmt: "call_site=%pS ptr=%p bytes_req=%zu bytes_alloc=%zu gfp_flags=%s node=%d accounted=%s", (void *)REC->call_site, REC->ptr, REC->bytes_req, REC->bytes_alloc, (REC->gfp_flags) ? __print_flags(REC->gfp_flags, "|", {(unsigned long)0xcc0, "GFP_KERNEL"}, {(unsigned long)0x820, "GFP_ATOMIC"}) : "none", REC->node, REC->accounted ? "true" : "false"
`;

/** The fields of an event record's kmem_cache_alloc, as both trace formats print them. */
export function kmemFields(run: RunResult, rec: RingRecord): { callSite: bigint; ptr: bigint; bytesReq: number; bytesAlloc: number; gfpKernel: boolean } {
  const ips = run.population.ips[rec.truthStack];
  const aux = rec.b >>> 0;
  const req = [32, 64, 192, 256, 512, 4096][aux % 6];
  return {
    callSite: ips[Math.min(1, ips.length - 1)],
    ptr: 0xffff888000000000n | BigInt(aux),
    bytesReq: req,
    bytesAlloc: req < 64 ? 64 : req,
    gfpKernel: (aux >>> 8) % 4 !== 0,
  };
}

/** The host shell that writes the markers (the text trace's `sh-1`). */
const MARKER_PID = 1;

/**
 * An address for tracing_mark_write, the caller a trace_marker write records: 64 KiB below the
 * lowest symbol of the run's kernel, so that no stack ip (each inside its function) resolves to it.
 */
function markerIp(kallsyms: string): bigint {
  const first = kallsyms.slice(0, kallsyms.indexOf(' '));
  const lowest = first ? BigInt('0x' + first) : 0n;
  return lowest > 0x10000n ? lowest - 0x10000n : 0n;
}

const GFP_KERNEL = 0xcc0n;
const GFP_ATOMIC = 0x820n;

/**
 * A run's trace as a trace-cmd `trace.dat` (version 7, uncompressed, little-endian, 64-bit), the
 * records the text `trace` holds, CPU by CPU as trace-cmd saves them: kmem_cache_alloc events
 * (raw ips and values where the text prints symbols), then the stack map's `stack_id` entry (a
 * 4-byte id for v4/v7, the u64 cookie gen << 32 | slot for v8) or a `kernel_stack` record of the
 * stack's ips; the file's own kallsyms symbolizes them.
 */
/**
 * common_flags by the context a record was written in (ring-records.ts CTX), the kernel's bits:
 * the CPU's own path none; an IRQ irqs-off (0x01) and hardirq (0x08); an NMI irqs-off and NMI
 * (0x40); an NMI inside an IRQ all three. An event and its stack record share them (trace_ctx).
 */
const DAT_FLAGS = [0x00, 0x09, 0x41, 0x49];

export function traceDatOf(run: RunResult): Uint8Array {
  const events: DatWriteEvent[] = [];
  const pids = new Set<number>();
  // the host's trace_marker writes before each reset, where the text trace has them (reset-marks.ts)
  const items = withResetMarks<TraceItem | { mark: ResetMark }>(
    run.items,
    run,
    (it) => ('mark' in it ? { ts: it.mark.ts, cpu: 0, event: true, lost: false } : { ts: it.rec.ts, cpu: it.cpu, event: outerEvent(it.rec), lost: false }),
    (mark) => ({ mark }),
  );
  const kallsyms = run.population.kernel.kallsyms();
  const markIp = markerIp(kallsyms);
  for (const it of items) {
    if ('mark' in it) {
      events.push({ kind: 'marker', cpu: 0, ts: Math.round(it.mark.ts * 1e9), pid: MARKER_PID, ip: markIp, text: `${RESET_MARKER} ${it.mark.n}\n` });
      continue;
    }
    const { cpu, rec } = it;
    const ts = Math.round(rec.ts * 1e9);
    const pid = rec.pid;
    pids.add(pid);
    if (rec.type === REC.EVENT) {
      const k = kmemFields(run, rec);
      const data = new Uint8Array(48); // the struct's 56 bytes, common fields apart
      const v = new DataView(data.buffer);
      v.setBigUint64(0, k.callSite, true);
      v.setBigUint64(8, k.ptr, true);
      v.setBigUint64(16, BigInt(k.bytesReq), true);
      v.setBigUint64(24, BigInt(k.bytesAlloc), true);
      v.setBigUint64(32, k.gfpKernel ? GFP_KERNEL : GFP_ATOMIC, true);
      v.setInt32(40, -1, true); // node
      data[44] = 0; // accounted
      events.push({ kind: 'raw', cpu, ts, pid, id: KMEM_CACHE_ALLOC_ID, data, flags: DAT_FLAGS[rec.context] ?? 0, preempt: 1 });
    } else if (rec.type === REC.FULL) {
      events.push({ kind: 'stack', cpu, ts, pid, ips: Array.from(wordsToIps(rec.words!, 0, rec.a)), flags: DAT_FLAGS[rec.context] ?? 0, preempt: 1 });
    } else {
      events.push({
        kind: 'stack_id',
        cpu,
        ts,
        pid,
        slot: rec.a,
        generation: rec.type === REC.COOKIE ? rec.b : null,
        flags: DAT_FLAGS[rec.context] ?? 0,
        preempt: 1,
      });
    }
  }
  const comms: [number, string][] = [...pids].sort((a, b) => a - b).flatMap((p): [number, string][] => (commOf(p) === '<...>' ? [] : [[p, commOf(p)]]));
  if (items.length > run.items.length && !pids.has(MARKER_PID)) comms.unshift([MARKER_PID, 'sh']);
  return writeTraceDatV7({
    littleEndian: true,
    longSize: 8,
    cpus: run.config.cpus,
    comms,
    kallsyms: markIp === 0n ? kallsyms : `${markIp.toString(16)} T tracing_mark_write\n${kallsyms}`,
    stackIdAbi: run.config.mode === 'v8' ? 'v8' : 'v7',
    eventSystems: [['kmem', [KMEM_CACHE_ALLOC_FORMAT]]],
    events,
    compression: 'none',
  });
}
