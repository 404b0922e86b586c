import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { LineSplitter, MAX_LINE, setLinesByMemchrForTests } from './lines.ts';
import { CHUNK_SIZES } from '../testing/formats.ts';
import { realIt, realTrace } from '../testing/real-traces.ts';

function split(bytes: Uint8Array, size: number): string[] {
  const out: string[] = [];
  const s = new LineSplitter((l) => out.push(l));
  if (size <= 0) s.push(bytes);
  else for (let i = 0; i < bytes.length; i += size) s.push(bytes.subarray(i, i + size));
  s.end();
  return out;
}

const utf16 = (text: string, le: boolean) => {
  const out = new Uint8Array(2 + text.length * 2);
  out.set(le ? [0xff, 0xfe] : [0xfe, 0xff]);
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    out[2 + 2 * i] = le ? c & 0xff : c >> 8;
    out[3 + 2 * i] = le ? c >> 8 : c & 0xff;
  }
  return out;
};

describe('LineSplitter', () => {
  const text = 'one\r\ntwo – ü\n\nlast';
  const want = ['one', 'two – ü', '', 'last'];
  it.each(CHUNK_SIZES)('UTF-8 with a BOM and CRLF, chunk %i', (size) => {
    expect(split(new Uint8Array([0xef, 0xbb, 0xbf, ...new TextEncoder().encode(text)]), size)).toEqual(want);
  });
  it.each(CHUNK_SIZES)('UTF-16 LE and BE after their byte-order mark, chunk %i', (size) => {
    expect(split(utf16(text, true), size)).toEqual(want);
    expect(split(utf16(text, false), size)).toEqual(want);
  });
  it('a chunk of 200 KB is decoded in pieces: a character cut by a piece boundary stays whole (UTF-8 and UTF-16)', () => {
    // 'ü' is 2 bytes in UTF-8: put one across byte 65536, and a 4-byte one across 131072
    const text = 'a'.repeat(65535) + 'ü\n' + 'b'.repeat(65532) + '😀\n' + 'c'.repeat(70000 - 65537 - 2);
    const want = text
      .split('\n')
      .map((l) => (l.length > 65536 ? null : l))
      .filter((l) => l !== null);
    const bytes = new TextEncoder().encode(text);
    expect(bytes[65535]).toBe(0xc3);
    expect(split(bytes, 0)).toEqual(want);
    expect(split(utf16(text, true).subarray(0), 0)).toEqual(want);
    expect(split(utf16(text, false), 1)).toEqual(want);
  });
  it('a file of one byte, and an empty file', () => {
    expect(split(new Uint8Array([0x61]), 1)).toEqual(['a']);
    expect(split(new Uint8Array([]), 0)).toEqual([]);
  });
});

describe('UTF-16 files through the sniffer and a reader', () => {
  it('a UTF-16 LE trace (as some Windows tools save it) is still a trace', async () => {
    const { sniffKind } = await import('./sniff.ts');
    const trace = '# tracer: nop\n            bash-1234    [001] d..1.   100.000001: <stack_id 7 gen 2>\n';
    expect(sniffKind(utf16(trace, true))).toBe('trace_text');
    expect(sniffKind(utf16(trace, false))).toBe('trace_text');
    expect(split(utf16(trace, true), 3)[1]).toContain('<stack_id 7 gen 2>');
  });
});

// ---------------------------------------------------------------- UTF-16 for every text format

describe('UTF-16 with a byte-order mark, every text format', async () => {
  const { readdirSync, statSync } = await import('node:fs');
  const { DiagnosticLog } = await import('./diagnostics.ts');
  const { parserForKind } = await import('./registry.ts');
  const { sniffKind } = await import('./sniff.ts');
  const { feedChunks, fixture } = await import('../testing/formats.ts');

  const walk = (dir: URL): string[] =>
    readdirSync(dir).flatMap((f) => (statSync(new URL(f, dir)).isDirectory() ? walk(new URL(f + '/', dir)).map((g) => f + '/' + g) : [f]));
  const own: [string, Uint8Array][] = [
    ...walk(new URL('./fixtures/', import.meta.url))
      .filter((f) => /^(kallsyms\/(proc|system-map)|stack_map_stat\/v\d+|stack_map_text|trace_text|dump_json\/json)\//.test(f))
      .map((f): [string, Uint8Array] => [f, fixture(f)]),
    [
      'capture.txt',
      new TextEncoder().encode(
        '# stackmap explorer capture, by capture.sh, 2026-12-01T10:00:00Z\n# kernel release (uname -r): 6.1.0-13-amd64\n# cpus: 8 (per_cpu/cpu* in tracefs)\n',
      ),
    ],
  ];
  // perf script and systrace HTML come only from real traces: read in their tests, which skip without the folder
  const REAL_TEXTS = ['flamegraph-perf-dd-stacks-01.txt', 'catapult-atrace_data.txt', 'trappy-trace_surfaceflinger.html'];
  const texts = (): [string, Uint8Array][] => [...own, ...REAL_TEXTS.map((f): [string, Uint8Array] => [f, realTrace(f)])];
  const sink = { event: () => {}, stackRecord: () => {}, lost: () => {} };
  /** What a reader makes of the bytes: its result as JSON (BigInts as text), and its diagnostics. */
  const readAll = (bytes: Uint8Array, chunk: number) => {
    const kind = sniffKind(bytes);
    const log = new DiagnosticLog('f');
    const r = feedChunks(
      parserForKind(kind, { file: 'f', diagnostics: log }, () => sink),
      bytes,
      chunk,
    ) as Record<string, unknown>;
    const records = 'records' in r ? (r.records as unknown[]) : undefined; // a dump's, built from its columns
    const plain = JSON.stringify({ ...r, records, columns: undefined }, (_k, v) =>
      typeof v === 'bigint' ? String(v) : ArrayBuffer.isView(v) ? Array.from(v as Uint8Array, String) : v,
    );
    return { kind, plain, diags: log.list() };
  };

  realIt('covers every text kind', () => {
    const kinds = new Set(texts().map(([, b]) => sniffKind(b)));
    expect([...kinds].sort()).toEqual([
      'capture_txt',
      'dump_json',
      'kallsyms',
      'perf_script',
      'stack_map_stat',
      'stack_map_text',
      'systrace_html',
      'trace_text',
    ]);
  });

  const title = (name: string) => `${name} in UTF-16 LE and BE (made here, unit by unit) reads as the UTF-8 file does`;
  const readsAsUtf8 = (bytes: Uint8Array) => {
    const text = new TextDecoder().decode(bytes);
    const want = readAll(bytes, 0);
    expect(want.kind).not.toBe('unknown');
    for (const le of [true, false]) {
      for (const chunk of [0, 1, 7, 64]) {
        if (chunk === 1 && bytes.length > 20000) continue; // the 317 KB HTML byte by byte: too slow for its worth
        const got = readAll(utf16(text, le), chunk);
        expect(got.kind).toBe(want.kind);
        expect(got.plain).toBe(want.plain);
        // diagnostics place bytes as bytes: only line places are the same
        expect(got.diags.filter((d) => !d.where.startsWith('offset'))).toEqual(want.diags.filter((d) => !d.where.startsWith('offset')));
      }
    }
  };
  for (const [name, bytes] of own) it(title(name), () => readsAsUtf8(bytes));
  for (const name of REAL_TEXTS) realIt(title(name), () => readsAsUtf8(realTrace(name)));

  it('kallsyms as Notepad saves it (UTF-16 LE, CRLF) and as UTF-16 BE, written by Python: the same symbols as the UTF-8 file', () => {
    const want = readAll(fixture('kallsyms/proc/with-modules.txt'), 0);
    for (const f of ['kallsyms/utf16/with-modules-le-crlf.txt', 'kallsyms/utf16/with-modules-be.txt']) {
      for (const chunk of [0, 1, 7]) {
        const got = readAll(fixture(f), chunk);
        expect(got.kind, f).toBe('kallsyms');
        expect(got.plain, f).toBe(want.plain);
        expect(got.diags, f).toEqual([]);
      }
    }
  });
});

describe("lines cut from the bytes: the browser's one loop against Node's memchr (property)", () => {
  /** what the reader is handed, line by line: by bytes (`b`, the range's text) or as decoded text (`t`), and too-long lines (`l`) */
  function events(bytes: Uint8Array, size: number, byMemchr: boolean): string[] {
    const was = setLinesByMemchrForTests(byMemchr);
    try {
      const out: string[] = [];
      const dec = new TextDecoder();
      const s = new LineSplitter(
        (l, n) => out.push(`t${n}:${l}`),
        undefined,
        (n, len) => out.push(`l${n}:${len}`),
        (b, start, end, n) => {
          // a line with a tab is declined by bytes, as a reader declines one it cannot take
          if (b.subarray(start, end).includes(9)) return false;
          out.push(`b${n}:${dec.decode(b.subarray(start, end))}`);
          return true;
        },
      );
      if (size <= 0) s.push(bytes);
      else for (let i = 0; i < bytes.length; i += size) s.push(bytes.subarray(i, i + size));
      out.push(`end ${s.end()}`);
      return out;
    } finally {
      setLinesByMemchrForTests(was);
    }
  }
  // plain runs of every length (a browser passes whole words of plain text in one step), and bytes at the edges of plain: 13, 14, 0x7F, 0x80, 0xE2
  const token = fc.oneof(
    fc.constantFrom('a', 'bc ', '\r', '\n', '\r\n', '\n\r', '\t', '–', '\u2028', '\u2029', 'ü', '\u00e2', '\ufeff', '\r\r\n', '\x0e', '\x7f', '\x80', '\x00'),
    fc.string({ unit: fc.constantFrom('x', 'y', ' ', '~', '\x0e'), minLength: 1, maxLength: 40 }),
  );
  const text = fc.tuple(fc.array(token, { maxLength: 60 }), fc.boolean(), fc.boolean()).map(([ts, long, bom]) => {
    const t = (bom ? '\ufeff' : '') + ts.join('');
    return new TextEncoder().encode(long ? t.slice(0, t.length >> 1) + 'x'.repeat(MAX_LINE + 2) + t.slice(t.length >> 1) : t);
  });
  it('every line handed over the same way, with the same text and number, at every chunk size', () => {
    fc.assert(
      fc.property(text, fc.constantFrom(0, 1, 2, 3, 5, 7, 64), (bytes, size) => {
        const node = events(bytes, size, true);
        expect(events(bytes, size, false)).toEqual(node);
      }),
      { numRuns: 400 },
    );
  });
  // files others published, every text one: whole and in chunks of 4 KiB and 7 bytes, the same lines handed over either way
  const published = [
    'catapult-atrace_data.txt',
    'catapult-decompressed_atrace_data.txt',
    'flamegraph-perf-dd-stacks-01.txt',
    'inferno-perf-java-inline.txt',
    'perf-tools-functrace_example.txt',
    'perf-tools-kprobe_example.txt',
    'trappy-trace_surfaceflinger.html',
  ];
  for (const name of published)
    realIt(`${name} (real): the same lines either way`, () => {
      const bytes = realTrace(name);
      for (const size of [0, 4096, 7]) expect(events(bytes, size, false)).toEqual(events(bytes, size, true));
    });
  it('and both are the lines of the text split at LF, one CR before it dropped', () => {
    const t = 'a\r\nb\rc\n\r\nx – y\n\u2028\nlast\r';
    const want = ['a', 'b\rc', '', 'x – y', '\u2028', 'last'];
    for (const byMemchr of [true, false]) {
      const got = events(new TextEncoder().encode('first\n' + t), 0, byMemchr);
      expect(got.slice(1, -1).map((e) => e.slice(e.indexOf(':') + 1))).toEqual(want);
      // the lines with a CR inside, U+2028 or any 0xE2 byte are decoded, the rest cut from the bytes
      expect(got.slice(1, -1).map((e) => e[0])).toEqual(['b', 't', 'b', 't', 't', 'b']);
    }
  });
});
