// Benchmarks: throughput of the readers and the whole ingest, as ratios to a baseline measured
// in the same run (splitting the same bytes into lines), so figures compare across machines.
// Usage: tsx bench/ingest.ts [--events N]   Writes bench/RESULTS.md.
import { writeFileSync } from 'node:fs';
import { DiagnosticLog } from '../src/core/formats/diagnostics.ts';
import { LineSplitter } from '../src/core/formats/lines.ts';
import { createTraceTextParser } from '../src/core/formats/trace-text.ts';
import type { TraceSink } from '../src/core/formats/types.ts';
import { Explorer } from '../src/core/model/explorer.ts';
import { Ingest } from '../src/core/model/ingest.ts';
import { ALL } from '../src/core/model/query-types.ts';
import { summarize } from '../src/core/model/summary.ts';
import { generateSample } from '../src/core/sim/sample-capture.ts';
import { sampleFiles } from '../src/core/sim/sample-files.ts';

const argEvents = process.argv.indexOf('--events');
const EVENTS = argEvents > 0 ? Number(process.argv[argEvents + 1]) : 300_000;
const CHUNK = 1 << 20;

interface Row {
  name: string;
  mb: number;
  ms: number;
  target?: { ratioAtLeast: number };
}

function chunks(bytes: Uint8Array): Uint8Array[] {
  const out: Uint8Array[] = [];
  for (let i = 0; i < bytes.length; i += CHUNK) out.push(bytes.subarray(i, i + CHUNK));
  return out;
}

/** Best of `runs` wall times, in ms: the run least disturbed by garbage collection and the VM. */
function time(fn: () => void, runs = 7): number {
  let best = Infinity;
  for (let i = 0; i < runs; i++) {
    const t0 = performance.now();
    fn();
    best = Math.min(best, performance.now() - t0);
  }
  return best;
}

console.log(`generating a capture of ${EVENTS} events...`);
const files = sampleFiles(generateSample({ seed: 1, cpus: 4, events: EVENTS, resets: 3, bits: 14, tail: 100 }));
const trace = files.get('trace')!;
const traceChunks = chunks(trace);
const mb = trace.length / 1e6;
const noopSink: TraceSink = { event() {}, stackRecord() {}, lost() {} };

const rows: Row[] = [];
const baseline = time(() => {
  let n = 0;
  const s = new LineSplitter(() => void n++);
  for (const c of traceChunks) s.push(c);
  s.end();
});
rows.push({ name: 'baseline: split into lines (TextDecoder + indexOf)', mb, ms: baseline });
rows.push({
  name: 'trace text reader (events, cookies, frames)',
  mb,
  ms: time(() => {
    const p = createTraceTextParser({ file: 'trace', diagnostics: new DiagnosticLog('trace') }, noopSink);
    for (const c of traceChunks) p.push(c);
    p.end();
  }),
  target: { ratioAtLeast: 0.12 },
});
let totalBytes = 0;
for (const b of files.values()) totalBytes += b.length;
rows.push({
  name: 'whole ingest: every file, columns, dumps, cookie index, summary',
  mb: totalBytes / 1e6,
  ms: time(() => {
    const ingest = new Ingest();
    for (const [name, bytes] of files) {
      const p = ingest.open(name);
      for (const c of chunks(bytes)) p.push(c);
      p.end();
    }
    summarize(ingest.finish());
  }),
  target: { ratioAtLeast: 0.06 },
});

{
  const ingest = new Ingest();
  for (const [name, bytes] of files) {
    const p = ingest.open(name);
    for (const c of chunks(bytes)) p.push(c);
    p.end();
  }
  const capture = ingest.finish();
  rows.push({
    name: 'explorer: index the capture, then a full-range timeline, top stacks and a top-down flame graph',
    mb,
    ms: time(() => {
      const ex = new Explorer(capture);
      const o = ex.overview();
      ex.timeline({ t0: o.t0, t1: o.t1, buckets: 1200, lanes: 'cpu', selection: ALL, highlightStack: null });
      ex.topStacks({ selection: ALL, filter: '', limit: 100 });
      ex.flame({ selection: ALL, mode: 'top-down', weight: 'occurrences', focus: null, highlightStack: null });
    }),
    target: { ratioAtLeast: 0.5 },
  });
}

const baseRate = mb / baseline;
let failed = 0;
const lines = [
  `# Benchmarks`,
  ``,
  `Measured by \`npm run bench\` on ${new Date().toISOString().slice(0, 10)}, Node ${process.version}, ` +
    `a generated v8 capture of ${EVENTS.toLocaleString('en')} events (trace ${mb.toFixed(1)} MB). ` +
    `Best of 7. Ratio = throughput / baseline throughput, both measured in this run.`,
  ``,
  `| benchmark | MB | ms | MB/s | ratio to baseline | target | ok |`,
  `| --- | ---: | ---: | ---: | ---: | --- | --- |`,
];
for (const r of rows) {
  const rate = r.mb / (r.ms / 1000);
  const ratio = rate / (baseRate * 1000);
  const ok = !r.target || ratio >= r.target.ratioAtLeast;
  if (!ok) failed++;
  lines.push(
    `| ${r.name} | ${r.mb.toFixed(1)} | ${r.ms.toFixed(0)} | ${rate.toFixed(1)} | ${ratio.toFixed(2)} | ${r.target ? `>= ${r.target.ratioAtLeast}` : ''} | ${ok ? 'yes' : 'NO'} |`,
  );
}
const table = lines.join('\n') + '\n';
console.log(table);
writeFileSync(new URL('./RESULTS.md', import.meta.url), table);
process.exitCode = failed ? 1 : 0;
