// A fake tracefs for scripts/capture.test.ts: a directory with tracefs's file names, whose
// stack_map (and stack_map_bin) move to the next generation's dump when `0` is written, as the
// kernel's reset does, and whose `trace` fills with a generated capture once the script clears it.
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync, existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { writeStackMapBin, writeStackMapText } from '../src/core/formats/stack-map-write.ts';
import { generateSample, type SampleCapture } from '../src/core/sim/sample-capture.ts';
import { sampleFiles } from '../src/core/sim/sample-files.ts';

/** The options files and their values before the script runs (not the kernel defaults, so a restore is seen). */
export const INITIAL: Record<string, string> = {
  tracing_on: '1',
  buffer_size_kb: '1408',
  current_tracer: 'nop',
  'options/stackmap': '0',
  'options/stacktrace': '0',
  'events/kmem/kmalloc/enable': '0',
  'events/sched/sched_wakeup/enable': '0',
};

export interface FakeOptions {
  stackmap?: boolean;
  bin?: boolean;
  resets?: number;
}

export interface Fake {
  dir: string;
  capture: SampleCapture;
  /** the text dump of each generation, in order, as the fake served it */
  texts: string[];
  bins: Uint8Array[];
  trace: string;
  /** what trace_marker held when each reset came: the script writes its marker just before */
  markersAtReset: string[];
  /** how many generations the fake has moved to so far (1 at the start) */
  served(): number;
  stop(): void;
}

const enc = new TextEncoder();
/** the CPUs of the generated capture, each with a per_cpu/cpuN folder */
export const FAKE_CPUS = 2;

export function makeFake(opts: FakeOptions = {}): Fake {
  const { stackmap = true, bin = true, resets = 2 } = opts;
  // a dump before each reset and one at the end (the generator takes its final dump before the
  // `tail` events, so at least one); generations = resets + 1
  const capture = generateSample({ seed: 1201 + resets, cpus: FAKE_CPUS, events: 500, resets, bits: 10, tail: 1 });
  const files = sampleFiles(capture);
  const trace = new TextDecoder().decode(files.get('trace'));
  const texts = capture.dumps.map((d) =>
    writeStackMapText(
      d.records.map((r) => ({ slot: r.slot, refCount: r.refCount, frames: Array.from(r.ips, (ip) => capture.kernel.printFrame(ip)) })),
      { version: 'v8', generation: d.generation },
    ),
  );
  const bins = capture.dumps.map((d) => writeStackMapBin({ version: 2, generation: d.generation, littleEndian: true, records: d.records }));
  const dir = mkdtempSync(join(tmpdir(), 'smx-tracefs-'));
  for (const [f, v] of Object.entries(INITIAL)) {
    if (f === 'options/stackmap' && !stackmap) continue;
    mkdirSync(join(dir, f, '..'), { recursive: true });
    writeFileSync(join(dir, f), v + '\n');
  }
  // tracefs has a per_cpu/cpuN folder for each CPU with a ring buffer: the generated capture's
  for (let c = 0; c < FAKE_CPUS; c++) mkdirSync(join(dir, 'per_cpu', `cpu${c}`), { recursive: true });
  writeFileSync(join(dir, 'trace'), '# stale: events from before the capture\n');
  writeFileSync(join(dir, 'trace_marker'), '');
  const markersAtReset: string[] = [];
  let gen = 0;
  const serve = () => {
    writeFileSync(join(dir, 'stack_map'), texts[Math.min(gen, texts.length - 1)]);
    if (bin) writeFileSync(join(dir, 'stack_map_bin'), bins[Math.min(gen, bins.length - 1)]);
  };
  if (stackmap) {
    serve();
    writeFileSync(join(dir, 'stack_map_stat'), files.get('stack_map_stat')!);
  }
  let filled = false;
  const timer = setInterval(() => {
    try {
      if (stackmap && readFileSync(join(dir, 'stack_map'), 'utf8').trim() === '0') {
        gen++;
        markersAtReset.push(readFileSync(join(dir, 'trace_marker'), 'utf8').trim());
        serve();
      }
      if (!filled && readFileSync(join(dir, 'trace')).length === 0) {
        filled = true;
        writeFileSync(join(dir, 'trace'), trace);
      }
    } catch {
      // a file being written this instant: look again next tick
    }
  }, 5);
  return {
    dir,
    capture,
    texts,
    bins,
    trace,
    markersAtReset,
    served: () => gen + 1,
    stop: () => {
      clearInterval(timer);
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** The option files' values now, as INITIAL lists them. */
export function optionValues(dir: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const f of Object.keys(INITIAL)) if (existsSync(join(dir, f))) out[f] = readFileSync(join(dir, f), 'utf8').trim();
  return out;
}

/**
 * A PATH of busybox applets only, so the busybox run uses busybox's tar, gzip, awk, sleep...
 * as a device would, not the host's GNU tools. Throws with a clear message when busybox is absent.
 */
export function busyboxPath(): string {
  let list: string;
  try {
    list = execFileSync('busybox', ['--list'], { encoding: 'utf8' });
  } catch {
    throw new Error('busybox is not installed: the capture script is tested under busybox sh (apt-get install busybox)');
  }
  const bin = mkdtempSync(join(tmpdir(), 'smx-busybox-'));
  const where = execFileSync('sh', ['-c', 'command -v busybox'], { encoding: 'utf8' }).trim();
  for (const a of list.split('\n')) if (a && !a.includes('/') && a !== '[[') symlinkSync(where, join(bin, a));
  return bin;
}

export { enc };
