import { describe, expect, it } from 'vitest';
import { DiagnosticLog } from './diagnostics.ts';
import { parserForKind } from './registry.ts';
import { sniffKind } from './sniff.ts';
import { feedChunks } from './test-util.ts';
import type { FileKind, TraceSink } from './types.ts';

// Linear time by construction (no regex that backtracks on untrusted text): every reader and the
// sniffer get 256 KB and 1 MB of each blank-like character and of the characters the old regexes
// backtracked on, alone and after the prefixes that route a line to each regex. The check is a
// ratio measured in this run (best of three each, 5 ms at least), never an absolute time: 4x the input must cost
// under 6x the time. The quadratic readers this replaced took 17-60 s on such inputs.

const nullSink: TraceSink = { event: () => {}, stackRecord: () => {}, lost: () => {} };
const enc = new TextEncoder();
const FILLERS = [' ', '\t', '\u00a0', '\u3000', '\u2028', '-', '<', '(', '=>', '+'];
const PREFIXES: Record<string, string[]> = {
  trace_text: ['', ' => ', 'a-1 ', 'x-', 'sh-1 [000] '],
  systrace_html: ['<script class="trace-data">\n', '<script '],
  stack_map_text: ['  [0] ', ' => ', 'stack_id 1 '],
  stack_map_stat: ['entries: ', 'k'],
  kallsyms: ['ffffffff81000000 t '],
  dump_json: ['[{"stack_id": 1, "ips": ["'],
};
const LINE = 4000;

function input(prefix: string, filler: string, bytes: number, lines: boolean): Uint8Array {
  const unit = lines ? prefix + filler.repeat(Math.ceil(LINE / filler.length)) + '\n' : filler;
  const one = enc.encode(unit).length;
  return enc.encode((lines ? '' : prefix) + unit.repeat(Math.max(1, Math.floor(bytes / one))));
}

function time(kind: FileKind, bytes: Uint8Array): number {
  let best = Infinity;
  for (let k = 0; k < 3; k++) {
    const t = performance.now();
    if (kind === 'unknown') sniffKind(bytes);
    else feedChunks(parserForKind(kind, { file: 'f', diagnostics: new DiagnosticLog('f') }, () => nullSink), bytes, 1 << 16);
    best = Math.min(best, performance.now() - t);
  }
  return best;
}

describe('every reader is linear in its input', () => {
  const cases: [FileKind, string, boolean][] = [];
  for (const [kind, prefixes] of Object.entries(PREFIXES)) {
    for (const p of prefixes) {
      cases.push([kind as FileKind, p, true]);
      cases.push([kind as FileKind, p, false]);
    }
  }
  cases.push(['unknown', '', false], ['unknown', '', true]); // the sniffer

  it.each(cases)('%s after %j (lines: %s)', (kind, prefix, lines) => {
    let worst = 0;
    let at = '';
    for (const f of FILLERS) {
      const a = input(prefix, f, 256 * 1024, lines);
      const b = input(prefix, f, 1024 * 1024, lines);
      // a busy machine can stretch one measurement; a quadratic reader is over 6 every time
      let ratio = Infinity;
      for (let k = 0; k < 3 && ratio >= 6; k++) ratio = Math.min(ratio, time(kind, b) / Math.max(time(kind, a), 5)); // below 5 ms the clock and GC are the noise
      if (ratio > worst) [worst, at] = [ratio, JSON.stringify(f)];
    }
    expect(worst, `worst ratio at filler ${at}`).toBeLessThan(6);
  });
});
