import type { FileKind } from '../formats/types.ts';

/**
 * Inputs that made the old readers quadratic: long runs of each blank-like character and of the
 * characters their regexes backtracked on, alone and after the prefixes that route a line to each
 * reader's slow path. Used by linear.test.ts (every reader finishes them) and bench/linear.ts
 * (the time for 4x the input is under 6x the time).
 */
export const FILLERS = [' ', '\t', '\u00a0', '\u3000', '\u2028', '-', '<', '(', '=>', '+'];

export const PREFIXES: Record<string, string[]> = {
  trace_text: ['', ' => ', 'a-1 ', 'x-', 'sh-1 [000] '],
  systrace_html: ['<script class="trace-data">\n', '<script '],
  stack_map_text: ['  [0] ', ' => ', 'stack_id 1 '],
  stack_map_stat: ['entries: ', 'k'],
  kallsyms: ['ffffffff81000000 t '],
  dump_json: ['[{"stack_id": 1, "ips": ["'],
  perf_script: ['', 'dd 1 ', 'dd 1 1.0: ', 'x: ', '\t 0 ', 'dd 1 1.0: 1 e:\n\t 0 x '],
  trace_cmd_dat: ['\x17\x08Dtracing6\0\0\x08\0\x10\0\0', '\x17\x08Dtracing7\0\0\x08\0\x10\0\0none\0\0' + '\0'.repeat(8)],
  capture_txt: ['# stackmap explorer capture, by x, d\n# set a', '# stackmap explorer capture, by '],
};

/** characters per line when the filler is cut into lines */
const LINE = 4000;
const enc = new TextEncoder();

/** `bytes` of `filler`, as one run after `prefix` or as lines each starting with it. */
export function hostileInput(prefix: string, filler: string, bytes: number, lines: boolean): Uint8Array {
  const unit = lines ? prefix + filler.repeat(Math.ceil(LINE / filler.length)) + '\n' : filler;
  const one = enc.encode(unit).length;
  return enc.encode((lines ? '' : prefix) + unit.repeat(Math.max(1, Math.floor(bytes / one))));
}

/** Every (reader, prefix, as lines) case; kind `unknown` is the sniffer. */
export function hostileCases(): [FileKind, string, boolean][] {
  const cases: [FileKind, string, boolean][] = [];
  for (const [kind, prefixes] of Object.entries(PREFIXES)) {
    for (const p of prefixes) {
      cases.push([kind as FileKind, p, true]);
      cases.push([kind as FileKind, p, false]);
    }
  }
  cases.push(['unknown', '', false], ['unknown', '', true]);
  return cases;
}

/** A ustar archive of `n` one-byte members `m0..m(n-1)`, written by hand (a header and one block each: packTar is far slower for hundreds of thousands), whose members no reader takes (issue 34, 15). */
export function tarOfOneByteMembers(n: number): Uint8Array<ArrayBuffer> {
  const out = new Uint8Array(n * 1024 + 1024);
  const enc = new TextEncoder();
  for (let i = 0; i < n; i++) {
    const h = out.subarray(i * 1024, i * 1024 + 512);
    h.set(enc.encode(`m${i}`), 0);
    h.set(enc.encode('0000644\0'), 100);
    h.set(enc.encode('0000000\0'), 108);
    h.set(enc.encode('0000000\0'), 116);
    h.set(enc.encode('00000000001\0'), 124);
    h.set(enc.encode('00000000000\0'), 136);
    h[156] = 0x30;
    h.set(enc.encode('ustar\0'), 257);
    h.set(enc.encode('00'), 263);
    h.fill(0x20, 148, 156);
    let sum = 0;
    for (let k = 0; k < 512; k++) sum += h[k];
    h.set(enc.encode(sum.toString(8).padStart(6, '0') + '\0 '), 148);
    out[i * 1024 + 512] = 0x41 + (i % 26);
  }
  return out;
}
