import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { DiagnosticLog } from './diagnostics.ts';
import { createKallsymsParser, scanSymbolLine, type SymbolLine } from './kallsyms.ts';
import { feedChunks } from '../testing/formats.ts';

/**
 * The line scanner and the reader against what they replaced: the regex the reader matched each
 * line with (V8's own reading of it: captures, `\s`, backtracking into the module's brackets), and
 * that reader's handling of blank lines, types and order, written out here as the reference.
 */
const LINE = /^([0-9a-fA-F]{8,16}) ([a-zA-Z?]) (\S+)(?:\s+\[(\S+)\])?\s*$/;

/** The regex's reading of a line, as the scanner gives it. */
function byRegex(line: string): SymbolLine | null {
  const m = LINE.exec(line);
  if (!m) return null;
  const v = BigInt('0x' + m[1]);
  return { hi: Number(v >> 32n), lo: Number(v & 0xffffffffn), type: m[2].charCodeAt(0), name: m[3], module: m[4] ?? null };
}

function byScanner(line: string): SymbolLine | null {
  const out: SymbolLine = { hi: -1, lo: -1, type: -1, name: '?', module: '?' };
  return scanSymbolLine(line, out) ? out : null;
}

/** The reader as it was (the regex per line, a sort always), to compare whole files with. */
function referenceRead(text: string) {
  const rows: { hi: number; lo: number; name: string; at: number }[] = [];
  const modules = new Map<string, string>();
  let used = 0;
  let unused = 0;
  const lines = text.split('\n');
  if (lines[lines.length - 1] === '') lines.pop();
  for (const line of lines) {
    if (line.trim() === '') {
      used++;
      continue;
    }
    const m = byRegex(line);
    if (!m) {
      unused++;
      continue;
    }
    used++;
    const t = String.fromCharCode(m.type);
    if (t === 't' || t === 'T' || t === 'w' || t === 'W') {
      rows.push({ hi: m.hi, lo: m.lo, name: m.name, at: rows.length });
      if (m.module && !modules.has(m.name)) modules.set(m.name, m.module);
    }
  }
  rows.sort((a, b) => a.hi - b.hi || a.lo - b.lo || a.at - b.at);
  return { names: rows.map((r) => r.name), hi: rows.map((r) => r.hi), lo: rows.map((r) => r.lo), used, unused, modules };
}

const BLANKS = [' ', '\t', '\u00a0', '\u2028', '\u3000', '\ufeff', '\v', '\u200a', '\u200b', '\f'];
const piece = fc.oneof(
  // an address of any length around 8..16, either case
  fc.stringMatching(/^[0-9a-fA-F]{0,18}$/),
  fc.constantFrom('ffffffff81000000', 'FFFFFFFF', '0000000000000000', 'ffffffffc0a01234', 'deadbeef', 'ffffffffffffffff1'),
  fc.constantFrom('t', 'T', 'w', 'W', 'd', '?', '1', 'é', 'tt'),
  fc.constantFrom(' ', '  ', ''),
  fc.constantFrom(...BLANKS),
  fc.constantFrom('[', ']', '[]', '[]]', '[mod]', '[a b]', '[x', 'x]', '[[m]]', '[m]x'),
  fc.string({ maxLength: 6 }),
  fc.constantFrom('do_sys_open', 'ext4_file_write_iter', 'fn.cold', '__pfx_x', 'a\u00a0b'),
);
/** Lines built from what symbol lines are made of, most of them near one. */
const line = fc.oneof(
  fc.array(piece, { maxLength: 9 }).map((p) => p.join('')),
  fc
    .tuple(
      fc.stringMatching(/^[0-9a-fA-F]{6,18}$/),
      fc.constantFrom('t', 'T', 'w', 'W', 'd', 'D', '?', 'x'),
      fc.stringMatching(/^[!-~]{0,12}$/),
      fc.option(fc.stringMatching(/^[!-~]{0,6}$/), { nil: undefined }),
      fc.constantFrom(' ', '\t', '  ', '\u00a0', ''),
      fc.constantFrom('', ' ', '\t', '\u3000', ' x'),
    )
    .map(([a, t, n, m, sep, tail]) => `${a} ${t} ${n}${m === undefined ? '' : `${sep}[${m}]`}${tail}`),
);

describe('kallsyms line scanner against the regex it replaced (property)', () => {
  it('matches the same lines and reads the same address, type, name and module', () => {
    fc.assert(
      fc.property(line, (l) => {
        expect(byScanner(l)).toEqual(byRegex(l));
      }),
      { numRuns: 5000 },
    );
  });

  it('reads whole files as the regex reader did (blank lines, types, modules, order), in any chunking', () => {
    fc.assert(
      fc.property(fc.array(line, { maxLength: 40 }), fc.integer({ min: 1, max: 64 }), (lines, chunk) => {
        // no line may hold a line break of its own: the file's lines are what the reader splits
        const text = lines.map((l) => l.replace(/[\n\r\u2028\u2029]/g, ' ')).join('\n') + '\n';
        const ctx = { file: 'kallsyms', diagnostics: new DiagnosticLog('kallsyms'), modules: new Map<string, string>() };
        const got = feedChunks(createKallsymsParser(ctx), new TextEncoder().encode(text), chunk);
        const want = referenceRead(text);
        expect(got.names).toEqual(want.names);
        expect([...got.hi]).toEqual(want.hi);
        expect([...got.lo]).toEqual(want.lo);
        expect({ used: got.lines.used, unused: got.lines.unused }).toEqual({ used: want.used, unused: want.unused });
        expect(ctx.modules).toEqual(want.modules);
      }),
      { numRuns: 400 },
    );
  });
});
