import { writeStackMapBin, writeStackMapStat, writeStackMapText } from '../formats/stack-map-write.ts';
import { writeTraceText, type TraceTextItem } from '../formats/trace-text-write.ts';
import type { SampleCapture } from './sample-capture.ts';

/**
 * The files a user would copy off the device for a generated capture, by tracefs name:
 * `trace`, a `stack_map_bin` per generation (taken before each reset and at the end), the
 * last generation's `stack_map` text, `stack_map_stat` and `kallsyms`.
 */
export function sampleFiles(c: SampleCapture): Map<string, Uint8Array> {
  const enc = new TextEncoder();
  const files = new Map<string, Uint8Array>();
  const items: TraceTextItem[] = c.lines.map((l) =>
    l.type === 'lost'
      ? { type: 'lost', cpu: l.cpu, count: l.count }
      : l.type === 'event'
        ? { type: 'event', comm: l.comm, pid: l.pid, tgid: null, cpu: l.cpu, ts: l.ts, flags: l.flags, name: l.name, payload: l.payload }
        : l.type === 'cookie'
          ? {
              type: 'stack',
              kind: 'cookie',
              comm: l.comm,
              pid: l.pid,
              cpu: l.cpu,
              ts: l.ts,
              flags: l.flags,
              slot: l.slot,
              generation: l.generation,
              frames: null,
            }
          : { type: 'stack', kind: 'full', comm: l.comm, pid: l.pid, cpu: l.cpu, ts: l.ts, flags: l.flags, slot: 0, generation: null, frames: l.frames },
  );
  files.set('trace', enc.encode(writeTraceText(items, { tracer: 'nop', cpus: c.options.cpus })));
  for (const d of c.dumps) {
    files.set(`stack_map_bin.gen${d.generation}`, writeStackMapBin({ version: 2, generation: d.generation, littleEndian: true, records: d.records }));
  }
  const last = c.dumps[c.dumps.length - 1];
  files.set(
    `stack_map.gen${last.generation}`,
    enc.encode(
      writeStackMapText(
        last.records.map((r) => ({ slot: r.slot, refCount: r.refCount, frames: Array.from(r.ips, (ip) => c.kernel.printFrame(ip)) })),
        { version: 'v8', generation: last.generation },
      ),
    ),
  );
  files.set('stack_map_stat', enc.encode(writeStackMapStat({ version: 'v8', ...c.stat })));
  files.set('kallsyms', enc.encode(c.kernel.kallsyms()));
  return files;
}
