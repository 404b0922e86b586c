import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { ingestFiles } from '../testing/test-helpers.ts';
import { DiagnosticLog } from './diagnostics.ts';
import { addressKey, TRAMPOLINE } from './frames.ts';
import { FrameTable } from '../capture/frame-table.ts';
import { createKallsymsParser, type SymbolFile } from './kallsyms.ts';
import { addressKeyOf, Located, Symbolizer } from './symbolizer.ts';
import { sniffKind } from './sniff.ts';
import { writeStackMapBin } from './stack-map-write.ts';
import { feedChunks, fixture } from '../testing/formats.ts';
import { readEveryWay, readers } from '../testing/reader-kit.ts';
import { kernel, kernelSpec, plainSymbolizer, stacks } from '../testing/kernels.ts';

function parse(bytes: Uint8Array, chunk = 0, file = 'kallsyms'): { syms: SymbolFile; log: DiagnosticLog } {
  const log = new DiagnosticLog(file);
  return { syms: feedChunks(createKallsymsParser({ file, diagnostics: log }), bytes, chunk), log };
}

/** Read every way (reader-kit.ts: chunk sizes, renamed `unknown`, the file's lines); the one-chunk reading and its diagnostics. */
function parseEveryWay(bytes: Uint8Array, file = 'kallsyms') {
  const r = readEveryWay(file, bytes, readers.kallsyms);
  return { syms: r.result, diagnostics: r.diagnostics };
}

const WITH_MODULES = fixture('kallsyms/proc/with-modules.txt');
const SYSTEM_MAP = fixture('kallsyms/system-map/basic.txt');
const ALL_ZERO = fixture('kallsyms/proc/all-zero.txt');

describe('kallsyms fixtures', () => {
  it('/proc/kallsyms with modules (every way: reader-kit.ts)', () => {
    expect(sniffKind(WITH_MODULES)).toBe('kallsyms');
    const { syms, diagnostics } = parseEveryWay(WITH_MODULES);
    expect(syms.format).toBe('kallsyms');
    expect(syms.allZero).toBe(false);
    expect(syms.lines).toEqual({ total: 20, used: 20, unused: 0 });
    // code symbols only: 11 kernel (T, t, W) + 3 ext4 + 1 nf_tables; D, d, B, r left out
    expect(syms.names).toHaveLength(15);
    expect(syms.addrs).toHaveLength(15);
    expect(syms.names).toContain('ext4_map_blocks');
    expect(syms.names).not.toContain('init_task');
    expect(syms.names).not.toContain('nft_chain_types');
    for (let i = 1; i < syms.addrs.length; i++) expect(syms.addrs[i] >= syms.addrs[i - 1]).toBe(true);
    expect(diagnostics).toEqual([]);
  });

  it('System.map (every way: reader-kit.ts)', () => {
    expect(sniffKind(SYSTEM_MAP)).toBe('kallsyms');
    const { syms, diagnostics } = parseEveryWay(SYSTEM_MAP);
    expect(syms.format).toBe('System.map');
    expect(syms.allZero).toBe(false);
    expect(syms.lines).toEqual({ total: 14, used: 14, unused: 0 });
    expect(syms.names).toHaveLength(10);
    expect(syms.addrs[0]).toBe(0xffffffff81000000n);
    expect(syms.names[syms.names.length - 1]).toBe('_etext');
    expect(diagnostics).toEqual([]);
  });

  it('all-zero kallsyms is reported (every way: reader-kit.ts)', () => {
    expect(sniffKind(ALL_ZERO)).toBe('kallsyms');
    const { syms, diagnostics } = parseEveryWay(ALL_ZERO);
    expect(syms.allZero).toBe(true);
    expect(syms.lines).toEqual({ total: 5, used: 5, unused: 0 });
    expect(diagnostics.map((d) => d.message)).toEqual(['every address is 0: kallsyms was read without privilege (read it as root); it cannot symbolize']);
    // and it symbolizes nothing
    expect(new Symbolizer(syms).symbolize(0xffffffff81234567n)).toBe('0xffffffff81234567');
  });

  it('a line that is not a symbol is unused and reported', () => {
    const { syms, log } = parse(new TextEncoder().encode('ffffffff81000000 T _text\nnot a symbol\n\n'));
    expect(syms.lines).toEqual({ total: 3, used: 2, unused: 1 });
    expect(log.list()).toEqual([{ file: 'kallsyms', where: 'line 2', message: 'not a symbol line (ADDR TYPE NAME [module])', count: 1 }]);
  });
});

describe('Symbolizer', () => {
  const { syms } = parse(WITH_MODULES);

  it('gives sym+0xoff inside a symbol, modules included', () => {
    const s = new Symbolizer(syms);
    expect(s.symbolize(0xffffffff81234567n)).toBe('vfs_read+0x7');
    expect(s.symbolize(0xffffffff81234560n)).toBe('vfs_read+0x0');
    expect(s.symbolize(0xffffffff8123477fn)).toBe('vfs_read+0x21f');
    expect(s.symbolize(0xffffffff81234780n)).toBe('vfs_write+0x0');
    expect(s.symbolize(0xffffffffc0400042n)).toBe('ext4_file_read_iter+0x42');
    // two symbols at one address: the later one in the file wins, the first is 0 bytes long
    expect(s.symbolize(0xffffffff81000010n)).toBe('_stext+0x10');
    expect([s.hits, s.misses]).toEqual([6, 0]);
  });

  it('leaves an address outside every symbol as hex', () => {
    const s = new Symbolizer(syms);
    expect(s.symbolize(0xffffffff80000000n)).toBe('0xffffffff80000000'); // below the first
    expect(s.symbolize(0xffffffffc0600000n)).toBe('0xffffffffc0600000'); // far past the last
    expect(s.symbolize(0xffffffffc0500010n)).toBe('nft_do_chain+0x10'); // just past the last
    expect([s.hits, s.misses]).toEqual([1, 2]);
  });

  it('keeps the trampoline marker and does not count it', () => {
    const s = new Symbolizer(syms);
    expect(s.symbolize(0x7fffffffn)).toBe(TRAMPOLINE);
    expect([s.hits, s.misses]).toEqual([0, 0]);
  });
});

describe('symbols through Ingest', () => {
  const bin = writeStackMapBin({
    version: 2,
    generation: 4,
    littleEndian: true,
    records: [
      { slot: 3, refCount: 10, ips: [0xffffffff81234567n, 0xffffffff81235020n, 0x7fffffffn, 0xffffffffc0400042n] },
      { slot: 9, refCount: 1, ips: [0xffffffff81001010n] },
    ],
  });
  const framesOf = (cap: ReturnType<typeof ingestFiles>, slot: number) => cap.stacks.framesOf(cap.dumps.byGeneration.get(4)!.slots.get(slot)!.stack);

  it.each([0, 7])('resolves stack_map_bin ips with a matching kallsyms (chunk %i)', (chunk) => {
    // in either order: dumps are symbolized at finish
    for (const files of [
      [
        ['kallsyms', WITH_MODULES],
        ['stack_map_bin', bin],
      ],
      [
        ['stack_map_bin', bin],
        ['kallsyms', WITH_MODULES],
      ],
    ] as [string, Uint8Array][][]) {
      const cap = ingestFiles(files, chunk);
      expect(framesOf(cap, 3)).toEqual(['vfs_read+0x7', 'rw_verify_area+0x20', TRAMPOLINE, 'ext4_file_read_iter+0x42']);
      expect(framesOf(cap, 9)).toEqual(['do_one_initcall+0x10']);
      expect(cap.diagnostics).toEqual([]);
    }
  });

  it('reports a kallsyms from another boot (KASLR-shifted)', () => {
    const shift = 0x1e000000n;
    const shifted = new TextDecoder().decode(WITH_MODULES).replace(/^[0-9a-f]{16}/gm, (a) => (BigInt('0x' + a) + shift).toString(16).padStart(16, '0'));
    const cap = ingestFiles([
      ['kallsyms', shifted],
      ['stack_map_bin', bin],
    ]);
    // the kernel ips fall below every shifted symbol; the module ip lands in a wrong symbol
    expect(framesOf(cap, 3)).toEqual(['0xffffffff81234567', '0xffffffff81235020', TRAMPOLINE, 'kmem_cache_alloc+0x20fffe42']);
    const d = cap.diagnostics.filter((x) => x.file === 'kallsyms');
    expect(d).toHaveLength(1);
    expect(d[0].message).toBe(
      '3 of 4 dump addresses fall outside every symbol: this symbol file is probably from another boot, or KASLR is on (System.map only matches with nokaslr)',
    );
  });

  it('reports an all-zero kallsyms and leaves the ips as hex', () => {
    const cap = ingestFiles([
      ['kallsyms', ALL_ZERO],
      ['stack_map_bin', bin],
    ]);
    expect(cap.files.map((f) => f.kind)).toEqual(['kallsyms', 'stack_map_bin']);
    expect(framesOf(cap, 3)).toEqual(['0xffffffff81234567', '0xffffffff81235020', TRAMPOLINE, '0xffffffffc0400042']);
    expect(cap.diagnostics.map((x) => [x.file, x.message])).toEqual([
      ['kallsyms', 'every address is 0: kallsyms was read without privilege (read it as root); it cannot symbolize'],
    ]);
  });
});

/** The symbolizer as it was: a BigInt binary search per ip (testing/kernels.ts plainSymbolizer). The reference for the fast one. */
function referenceSymbolizer(lines: readonly { addr: bigint; type: string; name: string }[]) {
  const p = plainSymbolizer(lines);
  return { symbolize: p.key, counts: p.counts };
}

describe('Symbolizer against a BigInt reference (property)', () => {
  const U64 = (1n << 64n) - 1n;
  const clamp = (x: bigint) => (x < 0n ? 0n : x > U64 ? U64 : x);
  // addresses near a few bases (core kernel, modules, a 32-bit kernel, the bottom and top of the space)
  const base = fc.constantFrom(0xffffffff81000000n, 0xffffffffc0000000n, 0xc0100000n, 0n, 0xfffffffffff00000n, 0x7fff0000n);
  const addr = fc.tuple(base, fc.bigInt({ min: -0x20000n, max: 0x40000n })).map(([b, d]) => clamp(b + d));
  const symLine = fc.record({
    addr,
    type: fc.constantFrom('T', 't', 'W', 'w', 'D', 'd', 'r', 'B'),
    name: fc.constantFrom<string>('vfs_read', 'cleanup', 'do_one_initcall', '_stext', 'x'),
    module: fc.option(fc.constantFrom('ext4', 'nf_tables'), { nil: null }),
    short: fc.boolean(),
  });
  const table = fc.array(symLine, { maxLength: 40 }).chain((ls) =>
    // some symbols share an address with another (aliases): the later one in the file wins
    fc.array(fc.nat(), { maxLength: 6 }).map((dups) => {
      const out = ls.slice();
      for (const d of dups) if (ls.length > 0) out.push({ ...ls[d % ls.length], name: `alias${d}` });
      return out;
    }),
  );
  const text = (ls: readonly { addr: bigint; type: string; name: string; module: string | null; short: boolean }[]) =>
    ls
      .map((l) => {
        const h = l.addr.toString(16);
        const a = l.short && l.addr <= 0xffffffffn ? h.padStart(8, '0') : h.padStart(16, '0');
        return `${a} ${l.type} ${l.name}${l.module ? `\t[${l.module}]` : ''}\n`;
      })
      .join('');

  it('gives every ip the same key, and counts the same hits and misses, by ip and by record', () => {
    fc.assert(
      fc.property(table, fc.array(fc.oneof(addr, fc.bigInt({ min: 0n, max: U64 }), fc.constant(0x7fffffffn)), { maxLength: 60 }), (ls, extra) => {
        const syms = parse(new TextEncoder().encode(text(ls))).syms;
        const ref = referenceSymbolizer(ls);
        // ips at, just below, just after and inside every symbol, and past the last one's span
        const ips = [...extra];
        for (const l of ls) for (const d of [-1n, 0n, 1n, 0x17n, 0xffffn, 0x10000n]) ips.push(clamp(l.addr + d));
        const s = new Symbolizer(syms);
        const expected = ips.map(ref.symbolize);
        expect(ips.map(s.symbolize)).toEqual(expected);
        expect([s.hits, s.misses]).toEqual([ref.counts.hits, ref.counts.misses]);
        // the dump columns' path: `locate` over halves arrays, in pieces at an offset, written at an offset
        const byHalves = new Symbolizer(syms);
        expect(located(byHalves, ips, 5)).toEqual(expected);
        expect([byHalves.hits, byHalves.misses]).toEqual([ref.counts.hits, ref.counts.misses]);
        expect(located(byHalves, ips, 1)).toEqual(expected);
        expect([byHalves.hits, byHalves.misses]).toEqual([2 * ref.counts.hits, 2 * ref.counts.misses]);
      }),
      { numRuns: 300 },
    );
  });

  it('finds the same symbol through the bucket index as by BigInt search (thousands of symbols sharing the high half)', () => {
    // the kernel's layout: every symbol in 0xffffffff8xxxxxxx, some crowded into one bucket, some far apart
    const gap = fc.oneof(fc.integer({ min: 0, max: 16 }), fc.integer({ min: 16, max: 4096 }), fc.integer({ min: 4096, max: 0x1000000 }));
    fc.assert(
      fc.property(fc.array(gap, { minLength: 1, maxLength: 3000 }), fc.array(fc.bigInt({ min: 0n, max: 0x40000000n }), { maxLength: 200 }), (gaps, probes) => {
        let at = 0xffffffff81000000n;
        const ls = gaps.map((g, i) => ({ addr: (at += BigInt(g)), type: 'T', name: `f${i % 700}`, module: null, short: false }));
        const syms = parse(new TextEncoder().encode(text(ls))).syms;
        const ref = referenceSymbolizer(ls);
        const ips = probes.map((d) => 0xffffffff81000000n - 0x100n + d);
        for (const l of ls) ips.push(l.addr, l.addr + 1n, l.addr - 1n);
        const s = new Symbolizer(syms);
        expect(located(s, ips, 64)).toEqual(ips.map(ref.symbolize));
        expect([s.hits, s.misses]).toEqual([ref.counts.hits, ref.counts.misses]);
      }),
      { numRuns: 60 },
    );
  });
});

/**
 * The keys of `ips` as a binary dump's reading makes them: `locate` over the halves, `piece` ips
 * a call, written after two cells of padding, then each located symbol and offset through a
 * frame table (the integers a stack table keeps) and read back as the frame's name.
 */
function located(s: Symbolizer, ips: readonly bigint[], piece: number): string[] {
  const hi = Uint32Array.from(ips, (x) => Number(x >> 32n));
  const lo = Uint32Array.from(ips, (x) => Number(x & 0xffffffffn));
  const sym = new Int32Array(ips.length + 3).fill(-7);
  const off = new Int32Array(ips.length + 3);
  for (let from = 0; from < ips.length; from += piece) s.locate(hi, lo, from, Math.min(piece, ips.length - from), sym, off, from + 2);
  expect([sym[0], sym[1], sym[ips.length + 2]]).toEqual([-7, -7, -7]);
  const frames = new FrameTable();
  const ids = ips.map((_, i) => {
    const k = sym[i + 2];
    if (k >= 0) return frames.site(frames.functions.intern(s.names[k]), off[i + 2]);
    if (k === Located.Trampoline) return frames.intern(TRAMPOLINE);
    if (k === Located.Wide) return frames.intern(s.resolve(hi[i], lo[i]));
    return frames.address(hi[i], lo[i]);
  });
  return ids.map((f) => frames.name(f));
}

describe('address keys without symbols', () => {
  it('match addressKey for every ip', () => {
    fc.assert(
      fc.property(
        fc.array(fc.oneof(fc.bigInt({ min: 0n, max: (1n << 64n) - 1n }), fc.constant(0x7fffffffn), fc.bigInt({ min: 0n, max: 0xffffffffn }))),
        (ips) => {
          const frames = new FrameTable();
          const keys = ips.map((ip) => (ip === 0x7fffffffn ? TRAMPOLINE : frames.name(frames.address(Number(ip >> 32n), Number(ip & 0xffffffffn)))));
          expect(keys).toEqual(ips.map(addressKey));
          expect(ips.map((ip) => addressKeyOf(Number(ip >> 32n), Number(ip & 0xffffffffn)))).toEqual(ips.map(addressKey));
        },
      ),
      { numRuns: 200 },
    );
  });
});

describe("Symbolizer on the two generators' kernels and stacks against a BigInt binary search (property)", () => {
  const split = (ip: bigint): [number, number] => [Number(ip >> 32n), Number(ip & 0xffffffffn)];
  it.each(['callgraph', 'random'] as const)('%s: every ip located and keyed as the plain search says; equal keys only for equal addresses', (shape) => {
    fc.assert(
      fc.property(kernelSpec(), fc.integer(), (spec, seed) => {
        const k = kernel(spec);
        const syms = parse(new TextEncoder().encode(k.text), 0).syms;
        const plain = plainSymbolizer(k.lines);
        const ips = stacks(k, shape, 30, seed).flat();
        // and the edges of every function: its start, the byte before, its last byte, far past it
        for (const f of k.functions) ips.push(f.addr, f.addr - 1n, f.addr + BigInt(f.size - 1), f.addr + BigInt(f.size) + 0x10000n);
        const s = new Symbolizer(syms);
        const want = ips.map(plain.key);
        expect(ips.map((ip) => s.resolve(...split(ip)))).toEqual(want);
        // counted by `locate`, by ip
        expect(located(s, ips, 7)).toEqual(want);
        expect([s.hits, s.misses]).toEqual([plain.counts.hits, plain.counts.misses]);
        // locateOne's symbol and offset say the same, with the plain search's name
        const one = ips.map((ip) => {
          const at = s.locateOne(...split(ip));
          return at >= 0 ? `${s.names[at]}+0x${(s.offset >>> 0).toString(16)}` : at === Located.Wide ? 'wide' : 'none';
        });
        // (an offset of 2^32 or more, past a symbol under another high half, is Located.Wide)
        const offsetOf = (w: string) => BigInt(w.slice(w.lastIndexOf('+0x') + 1));
        expect(one).toEqual(want.map((w) => (!w.includes('+0x') ? 'none' : offsetOf(w) >= 2n ** 32n ? 'wide' : w)));
        // address keys: dense, and one key one address
        const byKey = new Map<number, bigint>();
        let wrong = 0;
        for (const ip of ips) {
          const key = s.keyOf(...split(ip));
          if (key < 0) continue;
          if (key >= s.keySpace || (byKey.get(key) ?? ip) !== ip) wrong++;
          byKey.set(key, ip);
        }
        expect(wrong).toBe(0);
        // every function's start under the highest high half (the one the page index covers: the
        // kernel's text, 0xffffffff) has one, its page holding a symbol's start
        const top = k.lines.reduce((m, l) => (l.addr >> 32n > m ? l.addr >> 32n : m), 0n);
        expect(k.functions.filter((f) => f.addr >> 32n === top && s.keyOf(...split(f.addr)) < 0)).toEqual([]);
      }),
      { numRuns: 40 },
    );
  });
});
