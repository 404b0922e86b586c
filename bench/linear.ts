// Linear time on hostile input (issue 10's readers, measured here since unit tests carry no
// timing): every reader and the sniffer get 256 KB and 1 MB of the inputs in
// src/core/testing/hostile-inputs.ts; the worst ratio of the two times over every case must stay
// under 6 (4x the input; a quadratic reader is at 16). Best of three each, 5 ms at least (below
// that the clock and GC are the noise). Also the load of a tar of 400,000 one-byte members (issue 34).
// `--json`: the bench contract; `--smoke`: 64 KB and 256 KB, 20,000 members.
import { DiagnosticLog } from '../src/core/formats/diagnostics.ts';
import { FILLERS, hostileCases, hostileInput, tarOfOneByteMembers } from '../src/core/testing/hostile-inputs.ts';
import { parserForKind } from '../src/core/formats/registry.ts';
import { sniffKind } from '../src/core/formats/sniff.ts';
import type { FileKind, TraceSink } from '../src/core/formats/types.ts';
import { loadFiles } from '../src/core/capture/load.ts';

const SMOKE = process.argv.includes('--smoke');
const JSON_OUT = process.argv.includes('--json');
const SMALL = SMOKE ? 64 * 1024 : 256 * 1024;
const nullSink: TraceSink = { event: () => {}, stackRecord: () => {}, lost: () => {} };

function read(kind: FileKind, bytes: Uint8Array): void {
  if (kind === 'unknown') {
    sniffKind(bytes);
    return;
  }
  const p = parserForKind(kind, { file: 'f', diagnostics: new DiagnosticLog('f') }, () => nullSink);
  for (let i = 0; i < bytes.length; i += 1 << 16) p.push(bytes.subarray(i, i + (1 << 16)));
  p.end();
}

function time(kind: FileKind, bytes: Uint8Array): number {
  let best = Infinity;
  for (let k = 0; k < 3; k++) {
    const t = performance.now();
    read(kind, bytes);
    best = Math.min(best, performance.now() - t);
  }
  return best;
}

let worst = 0;
let at = '';
let smallMs = 0;
let largeMs = 0;
for (const [kind, prefix, lines] of hostileCases()) {
  for (const f of FILLERS) {
    const a = hostileInput(prefix, f, SMALL, lines);
    const b = hostileInput(prefix, f, SMALL * 4, lines);
    // a busy machine can stretch one measurement: take the best of three ratios
    let ratio = Infinity;
    let ta = 0;
    let tb = 0;
    for (let k = 0; k < 3 && ratio >= 6; k++) {
      ta = Math.max(time(kind, a), 5);
      tb = time(kind, b);
      ratio = Math.min(ratio, tb / ta);
    }
    if (ratio > worst)
      [worst, at, smallMs, largeMs] = [ratio, `${kind} after ${JSON.stringify(prefix)} (lines: ${lines}), filler ${JSON.stringify(f)}`, ta, tb];
  }
}
// The same bytes in longer lines (issue 18: perf script lines of over ~16k tokens cost 15.9x the
// time of short ones): each line-based reader that splits a line into tokens reads 1 MB (256 KB
// smoke) of lines of 100 tokens and of 16,000, with the time of the long lines over the short.
const SHAPE_GOAL = 3;
let shapeWorst = 0;
let shapeAt = '';
const tokenLines = (tokens: number, tail: string, bytes: number) => {
  const line = 'x '.repeat(tokens) + tail + '\n';
  return new TextEncoder().encode(line.repeat(Math.max(1, Math.floor(bytes / line.length))));
};
for (const [kind, tail] of [
  ['perf_script', '0 [000] 100.000001: 1 cycles:'],
  ['trace_text', '-0 [000] d..1 100.000001: kmem_cache_alloc: x=1'],
] as [FileKind, string][]) {
  const short = tokenLines(100, tail, SMALL * 4);
  const long = tokenLines(16_000, tail, SMALL * 4);
  let ratio = Infinity;
  for (let k = 0; k < 3 && ratio >= SHAPE_GOAL; k++) ratio = Math.min(ratio, time(kind, long) / Math.max(time(kind, short), 5));
  if (ratio > shapeWorst) [shapeWorst, shapeAt] = [ratio, `${kind}: lines of 16,000 tokens against lines of 100, ${(SMALL * 4) / 1024} KB each`];
}
console.log(`same bytes, longer lines: worst ratio ${shapeWorst.toFixed(2)} at ${shapeAt}`);

// Many members no reader takes (issue 34, 15: a tar of 400,000 one-byte members took 48 s through
// the command line): the whole load of such a tar against a quarter of it, 20,000 members in smoke.
const MEMBERS = SMOKE ? 20_000 : 400_000;
/** the best of a few loads of a tar of `n` such members */
async function membersLoadMs(n: number): Promise<number> {
  const members = new Blob([tarOfOneByteMembers(n)]);
  let best = Infinity;
  for (let k = 0; k < (SMOKE ? 1 : 2); k++) {
    const t = performance.now();
    const cap = await loadFiles([{ name: 'members.tar', blob: members }]);
    best = Math.min(best, performance.now() - t);
    if (cap.files.length !== 100) throw new Error(`members.tar: ${cap.files.length} files kept, not 100`);
  }
  return best;
}
// linear in the members: a quarter of them first, the ratio of the two times the row
const membersQuarterMs = await membersLoadMs(MEMBERS / 4);
const membersMs = await membersLoadMs(MEMBERS);
console.log(
  `a tar of ${MEMBERS.toLocaleString('en-US')} one-byte members: ${membersMs.toFixed(0)} ms (${(MEMBERS / 4).toLocaleString('en-US')}: ${membersQuarterMs.toFixed(0)} ms)`,
);

const goal = 6;
console.log(`worst ratio ${worst.toFixed(2)} at ${at}: ${smallMs.toFixed(1)} ms for ${SMALL / 1024} KB, ${largeMs.toFixed(1)} ms for 4x`);
if (JSON_OUT) {
  const row = {
    id: 'linear-worst-ratio',
    what: `hostile input, worst over every reader: time for 4x the input / time for ${SMALL / 1024} KB`,
    value: Math.round(largeMs * 10) / 10,
    unit: 'ms',
    baseline: { what: `the same reader on ${SMALL / 1024} KB`, value: Math.round(smallMs * 10) / 10, unit: 'ms' },
    ratio: Math.round(worst * 100) / 100,
    goal: `< ${goal}x for 4x the input (linear; quadratic is 16x)`,
    ...(SMOKE ? {} : { met: worst < goal }),
    note: at,
  };
  const shape = {
    id: 'linear-line-shape-ratio',
    what: 'the same bytes in lines of 16,000 tokens / in lines of 100, worst over perf script and trace text',
    value: Math.round(shapeWorst * 100) / 100,
    unit: 'x',
    goal: `< ${SHAPE_GOAL}x`,
    ...(SMOKE ? {} : { met: shapeWorst < SHAPE_GOAL }),
    note: shapeAt,
  };
  const tar = {
    id: 'linear-tar-members',
    what: `loadFiles of a tar of ${MEMBERS.toLocaleString('en-US')} one-byte members no reader takes (best of ${SMOKE ? 1 : 2}) against a quarter of them (issue 34: 48 s through the command line for 400,000, one diagnostic object each)`,
    value: Math.round(membersMs),
    unit: 'ms',
    baseline: { what: `the same for ${(MEMBERS / 4).toLocaleString('en-US')} members`, value: Math.round(membersQuarterMs), unit: 'ms' },
    ratio: membersMs / membersQuarterMs,
    goal: `< ${goal}x for 4x the members (linear)`,
    ...(SMOKE ? {} : { met: membersMs / membersQuarterMs < goal }),
  };
  console.log(JSON.stringify({ rows: [row, shape, tar] }));
}
