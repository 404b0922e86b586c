// summarize's top stacks on real perf script files others published (../shared/real-traces/),
// against FlameGraph's own stackcollapse-perf.pl run here (../shared/peer-tools/): its folded
// lines, the process-name root dropped and lines that then match added together, are the stacks
// by function and their sample counts. summarize merges by function for perf script input (its
// default granularity), so its top N must be the script's N largest counts, each row's frames
// (leaf first) one of the script's lines (root first) with that count.
import { execFileSync } from 'node:child_process';
import { expect } from 'vitest';
import { ingestFiles } from '../testing/test-helpers.ts';
import { realIt, realTrace } from '../testing/real-traces.ts';
import { summarize } from './summary.ts';

const STACKCOLLAPSE = new URL('../../../../shared/peer-tools/stackcollapse-perf.pl', import.meta.url).pathname;

/**
 * The script's folded stacks, `root;...;leaf` -> samples: the file on its stdin closed by a blank
 * line (it records a sample at one), each header's period taken out (the script weighs a sample by
 * its period, 1 where there is none; summarize counts samples), the process name left out.
 */
function folded(text: string): Map<string, number> {
  const input = text.replace(/^(\S.*:)\s*\d+(\s+\S+:\s*)$/gm, '$1$2') + '\n\n';
  const out = execFileSync('perl', [STACKCOLLAPSE], { encoding: 'utf8', input, maxBuffer: 1 << 26 });
  const counts = new Map<string, number>();
  for (const line of out.split('\n')) {
    if (line === '') continue;
    const sp = line.lastIndexOf(' ');
    const stack = line.slice(line.indexOf(';') + 1, sp);
    counts.set(stack, (counts.get(stack) ?? 0) + Number(line.slice(sp + 1)));
  }
  return counts;
}

// names: whether the summary names frames as the script does; it tidies C++ arguments and joins
// Java's inlined frames, which the folded export does (perf-script.test.ts), not the summary
const FILES: [string, boolean][] = [
  ['inferno-perf-go-stacks.txt', true],
  ['flamegraph-perf-dd-stacks-01.txt', true],
  ['inferno-perf-cpp-stacks-std-function.txt', false],
  ['inferno-perf-java-inline.txt', false],
];

for (const [file, names] of FILES) {
  realIt(`${file}: the top stacks by function are stackcollapse-perf.pl's largest counts${names ? ', the same stacks' : ''}`, () => {
    const bytes = realTrace(file);
    const want = folded(new TextDecoder().decode(bytes));
    const s = summarize(ingestFiles([['perf.script', bytes]]), 25);
    expect(s.granularity).toBe('function');
    const counts = [...want.values()].sort((a, b) => b - a);
    expect(s.top.length).toBe(Math.min(25, want.size));
    expect(s.top.map((r) => r.count)).toEqual(counts.slice(0, s.top.length));
    if (names) for (const r of s.top) expect(want.get([...r.frames].reverse().join(';')), r.frames.join(' <- ')).toBe(r.count);
  });
}
