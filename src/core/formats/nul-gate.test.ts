import { closeSync, openSync, readdirSync, readSync, statSync } from 'node:fs';
import { gzipSync } from 'node:zlib';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { ingestFiles } from '../testing/test-helpers.ts';
import { DiagnosticLog } from './diagnostics.ts';
import { MAX_LINE, setLinesByMemchrForTests, TOO_LONG } from './lines.ts';
import { hasNulByWords, nulPadding, STRAY_NUL } from './nul-gate.ts';
import { parserForKind } from './registry.ts';
import { sniffKind } from './sniff.ts';
import { CHUNK_SIZES, feedChunks, fixture } from '../testing/formats.ts';
import { realIt, realTrace } from '../testing/real-traces.ts';
import type { FileKind, LineCount, TraceSink } from './types.ts';

// A stray NUL (one bit flipped in a space) or NUL padding at the end loses no text file: it is
// still sniffed as what it is and read, the NULs reported by offset. Binary formats stay binary.

const nullSink: TraceSink = { event: () => {}, stackRecord: () => {}, lost: () => {} };

function read(kind: FileKind, bytes: Uint8Array, chunk: number) {
  const log = new DiagnosticLog('f');
  const r = feedChunks(
    parserForKind(kind, { file: 'f', diagnostics: log }, () => nullSink),
    bytes,
    chunk,
  ) as { lines?: LineCount | null };
  return { lines: r.lines ?? null, diags: log.list().map((d) => `${d.where}: ${d.message}`) };
}

function walk(dir: URL): string[] {
  return readdirSync(dir).flatMap((f) => (statSync(new URL(f, dir)).isDirectory() ? walk(new URL(f + '/', dir)).map((g) => f + '/' + g) : [f]));
}

/** Every text fixture (UTF-8 ones: the UTF-16 copies are read in their own tests). */
const TEXTS: [string, Uint8Array][] = walk(new URL('./fixtures/', import.meta.url))
  .filter((f) => /^(kallsyms\/(proc|system-map)|stack_map_stat\/v\d+|stack_map_text|trace_text|dump_json\/json)\//.test(f))
  .map((f): [string, Uint8Array] => [f, fixture(f)]);
/** And the real perf and ftrace texts, read in their tests (which skip without the folder). */
const REAL_TEXTS = ['flamegraph-perf-dd-stacks-01.txt', 'catapult-atrace_data.txt'];

const hex = (n: number) => '0x' + n.toString(16);

/** The lines right after the one holding byte `at` that continue its record: frames of a stack (` => f`, `  [0] f`, `\t  ffff f (dso)`). */
function followers(bytes: Uint8Array, at: number): number {
  const lines = new TextDecoder().decode(bytes.subarray(at)).split('\n').slice(1);
  let n = 0;
  while (n < lines.length && /^(?:\s*=>|\s+\[\d+\]|\s+[0-9a-f]+ )/.test(lines[n])) n++;
  return n;
}

describe('a NUL in a text file', () => {
  const meant = (texts: [string, Uint8Array][]) => {
    for (const [name, bytes] of texts) {
      expect(bytes.includes(0), name).toBe(false);
      expect(sniffKind(bytes), name).not.toBe('unknown');
    }
  };
  it('the text fixtures are what the test means them to be', () => {
    expect(TEXTS.length).toBeGreaterThan(15);
    meant(TEXTS);
  });
  realIt('the real texts are what the test means them to be', () => meant(REAL_TEXTS.map((f) => [f, realTrace(f)])));

  const title = (name: string) => `${name}: its first space (and one in its middle) made a NUL, it is still sniffed and read, the NUL named by offset`;
  const stillRead = (bytes: Uint8Array) => {
    const kind = sniffKind(bytes);
    const lines = bytes.filter((b) => b === 10).length + (bytes[bytes.length - 1] === 10 ? 0 : 1);
    const clean = read(kind, bytes, 0);
    const spaces = [bytes.indexOf(32), bytes.indexOf(32, Math.min(bytes.length >> 1, 2048))].filter((i) => i >= 0 && i < 4096);
    expect(spaces.length).toBeGreaterThan(0);
    for (const at of spaces) {
      const flipped = bytes.slice();
      flipped[at] = 0;
      expect(sniffKind(flipped)).toBe(kind);
      for (const chunk of CHUNK_SIZES) {
        const r = read(kind, flipped, chunk);
        expect(r.diags).toContain(`offset ${hex(at)}: ${STRAY_NUL}`);
        // every line still counted (a space is no line end); the reader judges the damaged line,
        // and at most the lines that belong to it (a record's frames after its header) go with it
        if (r.lines) {
          expect(r.lines.total).toBe(lines);
          expect(r.lines.used).toBeGreaterThanOrEqual(clean.lines!.used - 1 - followers(bytes, at));
        }
      }
    }
  };
  for (const [name, bytes] of TEXTS) it(title(name), () => stillRead(bytes));
  for (const name of REAL_TEXTS) realIt(title(name), () => stillRead(realTrace(name)));

  it('two runs of NULs, one across chunk boundaries, are two diagnostics whatever the chunking', () => {
    const text = 'ffffffff81000000 T startup_64\nffffffff81000070 T secondary\nffffffff81000100 T third_one\n';
    const bytes = new TextEncoder().encode(text);
    bytes.fill(0, 17, 18); // one
    bytes.fill(0, 40, 52); // twelve: cut by chunks of 1 and 7
    for (const chunk of CHUNK_SIZES) {
      const r = read('kallsyms', bytes, chunk);
      expect(r.diags.filter((d) => d.includes(STRAY_NUL))).toEqual([`offsets 0x11, 0x28: ${STRAY_NUL}`]);
      expect(r.lines).toEqual({ total: 3, used: 1, unused: 2 });
    }
  });
});

describe("stray NULs in a trace: the browser's line scan vouches for what it read (property)", () => {
  // the v8 fixture's header, then its event lines forty times (so that chunks cut lines everywhere)
  const v8 = new TextDecoder().decode(fixture('trace_text/v8/stack_id_gen.txt'));
  const header =
    v8
      .split('\n')
      .filter((l) => l.startsWith('#'))
      .join('\n') + '\n';
  const body =
    v8
      .split('\n')
      .filter((l) => l && !l.startsWith('#'))
      .join('\n') + '\n';
  const trace = new TextEncoder().encode(header + body.repeat(40));
  const headerBytes = new TextEncoder().encode(header).length;
  /** The runs of 0 bytes not at the end, by a plain walk over the bytes: how many, and the first five offsets. */
  function plainRuns(b: Uint8Array): { count: number; first: number[] } {
    let end = b.length;
    while (end > 0 && b[end - 1] === 0) end--;
    const first: number[] = [];
    let count = 0;
    for (let i = 0; i < end; i++) {
      if (b[i] !== 0 || (i > 0 && b[i - 1] === 0)) continue;
      count++;
      if (first.length < 5) first.push(i);
    }
    return { count, first };
  }
  /** Ingest's capture of the bytes, lines cut Node's way (memchr, the gate searches first) or the browser's (scanLine vouches, the gate searches the rest after). */
  function load(bytes: Uint8Array, chunk: number, byMemchr: boolean) {
    const was = setLinesByMemchrForTests(byMemchr);
    try {
      const cap = ingestFiles([['trace', bytes]], chunk);
      const nul = cap.diagnostics.find((d) => d.message === STRAY_NUL);
      return {
        nul: nul ? { count: nul.count, where: nul.where } : null,
        lines: cap.files[0].lines,
        events: cap.trace.eventCount,
        others: cap.diagnostics
          .filter((d) => d.message !== STRAY_NUL)
          .map((d) => `${d.where}: ${d.message}`)
          .sort(),
      };
    } finally {
      setLinesByMemchrForTests(was);
    }
  }
  it('every run reported once at its offset, both ways, in any chunking; the same lines and events', () => {
    fc.assert(
      fc.property(
        fc.array(fc.record({ at: fc.nat(), len: fc.integer({ min: 1, max: 9 }) }), { maxLength: 6 }),
        fc.constantFrom(0, 1, 7, 64, 4096),
        fc.boolean(),
        (runs, chunk, padded) => {
          const bytes = trace.slice();
          // after the header: a trace whose header holds NULs is not sniffed as a trace
          const at = (x: number) => headerBytes + (x % (bytes.length - headerBytes));
          for (const r of runs) bytes.fill(0, at(r.at), at(r.at) + r.len);
          // a last byte that is text: a run there would be padding (its own test)
          bytes[bytes.length - 1] = 10;
          const file = padded ? Uint8Array.from([...bytes, 0, 0, 0]) : bytes;
          const want = plainRuns(file);
          const node = load(file, chunk, true);
          expect(node.events).toBeGreaterThan(0);
          const browser = load(file, chunk, false);
          const where =
            want.count === 0
              ? null
              : `offset${want.count > 1 ? 's' : ''} ${want.first.map(hex).join(', ')}${want.count > 5 ? ` (+${want.count - 5} more)` : ''}`;
          expect(node.nul).toEqual(want.count === 0 ? null : { count: want.count, where });
          expect(browser).toEqual(node);
        },
      ),
      { numRuns: 150 },
    );
  });
});

describe('NUL padding at the end', () => {
  const stat = fixture('stack_map_stat/v8/basic.txt');
  const padded = fixture('stack_map_stat/padded/v8-nul-padded.txt');

  it('the padded stat fixture is the v8 one and zeros to 4 KB (Python wrote it)', () => {
    expect(padded.length).toBe(4096);
    expect(padded.subarray(0, stat.length)).toEqual(stat);
    expect(padded.subarray(stat.length).every((b) => b === 0)).toBe(true);
  });

  it.each(CHUNK_SIZES)('a stack_map_stat padded to 4 KB or 1 MB reads as the unpadded one, the padding reported once (chunk %i)', (chunk) => {
    const clean = read('stack_map_stat', stat, 0);
    const mb = new Uint8Array(1 << 20);
    mb.set(stat);
    for (const bytes of chunk === 1 ? [padded] : [padded, mb]) {
      expect(sniffKind(bytes)).toBe('stack_map_stat');
      const r = read('stack_map_stat', bytes, chunk);
      expect(r.lines).toEqual(clean.lines);
      expect(r.diags).toEqual([...clean.diags, `offset ${hex(stat.length)}: ${nulPadding(bytes.length - stat.length)}`]);
    }
  });

  it('through Ingest, renamed `unknown`: the same facts as the clean file, one diagnostic', () => {
    const want = ingestFiles([['unknown', stat]]).stats[0];
    const cap = ingestFiles([['unknown', padded]], 7);
    expect(cap.files[0].kind).toBe('stack_map_stat');
    expect(cap.stats[0].values).toEqual(want.values);
    expect(cap.diagnostics.map((d) => [d.where, d.message])).toEqual([[`offset ${hex(stat.length)}`, nulPadding(4096 - stat.length)]]);
  });

  it('UTF-16 padded with NUL code units (and an odd zero byte) reads as the unpadded file', () => {
    const text = new TextDecoder().decode(stat);
    const le = new Uint8Array(2 + 2 * text.length + 301);
    le.set([0xff, 0xfe]);
    for (let i = 0; i < text.length; i++) le[2 + 2 * i] = text.charCodeAt(i);
    expect(sniffKind(le)).toBe('stack_map_stat');
    const clean = read('stack_map_stat', stat, 0);
    for (const chunk of CHUNK_SIZES) {
      const r = read('stack_map_stat', le, chunk);
      expect(r.lines).toEqual(clean.lines);
      expect(r.diags).toEqual([`offset ${hex(2 + 2 * text.length)}: ${nulPadding(301)}`]);
    }
  });

  it('a block of zeros inside a file: one diagnostic for the run, its line too long to read, the lines after it read', () => {
    const head = new TextEncoder().encode('ffffffff81000000 T startup_64\n');
    const tail = new TextEncoder().encode('\nffffffff81000070 T secondary\n');
    const bytes = new Uint8Array(head.length + 200_000 + tail.length);
    bytes.set(head);
    bytes.set(tail, head.length + 200_000);
    for (const chunk of [0, 4096, 65536]) {
      const r = read('kallsyms', bytes, chunk);
      expect(r.lines).toEqual({ total: 3, used: 2, unused: 1 });
      expect(r.diags).toEqual([`offset ${hex(head.length)}: ${STRAY_NUL}`, `line 2: ${TOO_LONG}`]);
    }
    expect(200_000).toBeGreaterThan(MAX_LINE);
  });
});

describe('binary stays binary', () => {
  realIt('a real trace.dat is sniffed as before', () => {
    expect(sniffKind(realTrace('trappy-trace.dat'))).toBe('trace_cmd_dat');
  });

  it('stack_map_bin, an executable and zeros are sniffed as before', () => {
    for (const f of ['stack_map_bin/v1/le.bin', 'stack_map_bin/v1/be.bin', 'stack_map_bin/v2/le.bin']) expect(sniffKind(fixture(f)), f).toBe('stack_map_bin');
    // node's own executable: ELF, NULs and control bytes from its fourth byte on
    const elf = new Uint8Array(16384);
    const fd = openSync(process.execPath, 'r');
    readSync(fd, elf, 0, elf.length, 0);
    closeSync(fd);
    expect(sniffKind(elf)).toBe('unknown');
    expect(sniffKind(new Uint8Array(16384))).toBe('unknown');
    // UTF-16 without a byte-order mark: every other byte a NUL
    const noBom = new Uint8Array(2000);
    for (let i = 0; i < 1000; i++) noBom[2 * i] = 'ffffffff81000000 T x\n'.charCodeAt(i % 21);
    expect(sniffKind(noBom)).toBe('unknown');
  });

  it('gzip and zip bytes are not text (unpack sniffs them first; the text sniffer never takes them)', () => {
    const gz = gzipSync(new TextEncoder().encode('ffffffff81000000 T startup_64\n'.repeat(50)));
    expect(sniffKind(gz)).toBe('unknown');
    const zip = fixture('fuzz-regressions/zip-of-spaces/spaces.zip');
    expect(sniffKind(zip)).toBe('unknown');
  });
});

describe("hasNulByWords (the browser's scan) against a byte-at-a-time search (property)", () => {
  it('finds a 0 byte wherever it lies, at every alignment and length', () => {
    fc.assert(
      fc.property(
        fc.uint8Array({ minLength: 0, maxLength: 80 }).map((b) => b.map((x) => (x === 0 ? 1 : x))),
        fc.array(fc.nat(), { maxLength: 2 }),
        fc.nat(),
        fc.nat(),
        (bytes, zeros, from, to) => {
          for (const z of zeros) if (bytes.length) bytes[z % bytes.length] = 0;
          const a = bytes.length ? from % bytes.length : 0;
          const c = bytes.subarray(a, a + (to % (bytes.length - a + 1)));
          expect(hasNulByWords(c)).toBe(c.includes(0));
        },
      ),
      { numRuns: 2000 },
    );
    // a 0 in each byte of a word, and bytes that borrow (0x01 after 0x00, 0x80, 0xff) around none
    for (const fill of [1, 0x80, 0xff, 0x7f])
      for (let k = 0; k < 12; k++) {
        const b = new Uint8Array(12).fill(fill);
        expect(hasNulByWords(b)).toBe(false);
        b[k] = 0;
        expect(hasNulByWords(b)).toBe(true);
      }
    // every place of a single 0 in every length up to 72 at every alignment: each word of the
    // four tested at once, and the words after the last four, against includes()
    const buf = new Uint8Array(80);
    for (let from = 0; from < 4; from++)
      for (let len = 0; len <= 72; len++)
        for (let z = -1; z < len; z++) {
          buf.fill(0x41);
          if (z >= 0) buf[from + z] = 0;
          const c = buf.subarray(from, from + len);
          if (hasNulByWords(c) !== c.includes(0)) expect({ from, len, z, found: hasNulByWords(c) }).toEqual({ from, len, z, found: c.includes(0) });
        }
  });
});
