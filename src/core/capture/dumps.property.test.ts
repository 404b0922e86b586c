import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { DiagnosticLog } from '../formats/diagnostics.ts';
import { TRAMPOLINE } from '../formats/frames.ts';
import { createKallsymsParser } from '../formats/kallsyms.ts';
import { Symbolizer } from '../formats/symbolizer.ts';
import { createStackMapBinParser } from '../formats/stack-map-bin.ts';
import { writeStackMapBin } from '../formats/stack-map-write.ts';
import type { ParsedDump } from '../formats/types.ts';
import { kernel, kernelSpec, plainSymbolizer, stacks } from '../testing/kernels.ts';
import { DumpIndex } from './dumps.ts';
import { Ingest } from './ingest.ts';
import { StackTable } from './stack-table.ts';

/** Plain symbolization: a BigInt binary search over the code symbols, one string per ip. */
function plainKey(syms: { addr: bigint; name: string }[] | null) {
  const code = syms ? [...syms].sort((a, b) => (a.addr < b.addr ? -1 : a.addr > b.addr ? 1 : 0)) : [];
  return (ip: bigint): string => {
    if (ip === 0x7fffffffn) return TRAMPOLINE;
    const raw = '0x' + ip.toString(16);
    if (code.length === 0 || ip < code[0].addr) return raw;
    let lo = 0;
    let hi = code.length - 1;
    while (lo < hi) {
      const mid = (lo + hi + 1) >> 1;
      if (code[mid].addr <= ip) lo = mid;
      else hi = mid - 1;
    }
    const end = lo + 1 < code.length ? code[lo + 1].addr : code[lo].addr + 0x10000n;
    return ip < end ? `${code[lo].name}+0x${(ip - code[lo].addr).toString(16)}` : raw;
  };
}

const parseBin = (bytes: Uint8Array, file: string): ParsedDump =>
  (() => {
    const p = createStackMapBinParser({ file, diagnostics: new DiagnosticLog(file) });
    p.push(bytes);
    return p.end();
  })();

/** Everything a dump index says, as plain values (frame ids aside: each path interns frames in its own order). */
function describeIndex(stacks: StackTable, index: DumpIndex) {
  const gens = index.generations().map((g) => {
    const d = index.byGeneration.get(g)!;
    return { g, sources: d.sources, slots: [...d.slots].map(([slot, s]) => ({ slot, ref: s.refCount, node: s.stack, frames: stacks.framesOf(s.stack) })) };
  });
  const genless = index.generationless.map((d) => [...d.slots].map(([slot, s]) => ({ slot, node: s.stack, frames: stacks.framesOf(s.stack) })));
  const merged = [...index.generationlessSlots].map(([slot, e]) => ({
    slot,
    ambiguous: e.ambiguous,
    best: e.best.stack,
    readings: e.readings.map((r) => r.stack),
  }));
  // the frames the stacks use (a binary record's frames enter the frame table when it is read,
  // so a record dropped later, a slot read twice, may leave frames no stack names)
  const used = new Set<string>();
  for (let n = 1; n < stacks.nodeCount; n++) used.add(stacks.frames.name(stacks.frame(n)));
  return { gens, genless, merged, size: stacks.size, nodes: stacks.nodeCount, frames: [...used].sort() };
}

describe('DumpIndex over binary columns against plain string frames (property)', () => {
  const base = 0xffffffff81000000n;
  const sym = fc.record({ off: fc.nat({ max: 0x4000 }), name: fc.constantFrom('vfs_read', 'schedule', 'kfree', 'cleanup', 'x') });
  const ip = fc.oneof(
    fc.nat({ max: 0x5000 }).map((o) => base + BigInt(o)),
    fc.constant(0x7fffffffn),
    fc.bigInt({ min: 0n, max: (1n << 64n) - 1n }),
  );
  // few distinct ips so records share prefixes and slots of different dumps agree or disagree
  const stack = fc.array(fc.nat({ max: 11 }), { maxLength: 12 });
  const dumpArb = fc.record({
    version: fc.constantFrom(1, 2),
    generation: fc.nat({ max: 2 }),
    littleEndian: fc.boolean(),
    records: fc.array(fc.record({ slot: fc.nat({ max: 9 }), refCount: fc.nat({ max: 50 }), stack }), { maxLength: 12 }),
  });

  it('gives every slot the same stack, ref_count, node and diagnostics as symbolizing each ip to a string', () => {
    fc.assert(
      fc.property(
        fc.array(sym, { maxLength: 8 }),
        fc.array(ip, { minLength: 12, maxLength: 12 }),
        fc.array(dumpArb, { minLength: 1, maxLength: 4 }),
        fc.boolean(),
        (syms, alphabet, dumps, withSyms) => {
          const symList = syms.map((s) => ({ addr: base + BigInt(s.off), name: s.name }));
          const text = symList.map((s) => `${s.addr.toString(16)} T ${s.name}\n`).join('');
          const kp = createKallsymsParser({ file: 'kallsyms', diagnostics: new DiagnosticLog('kallsyms') });
          kp.push(new TextEncoder().encode(text));
          const symFile = kp.end();
          const useSyms = withSyms && symList.length > 0;
          const key = plainKey(useSyms ? symList : null);

          const parsed = dumps.map((d, i) =>
            parseBin(
              writeStackMapBin({
                version: d.version,
                generation: d.version === 1 ? null : d.generation,
                littleEndian: d.littleEndian,
                records: d.records.map((r) => ({ slot: r.slot, refCount: r.refCount, ips: r.stack.map((k) => alphabet[k]) })),
              }),
              `stack_map_bin.${i}`,
            ),
          );
          // the fast path: columns, ids through the symbolizer's cache
          const fastTable = new StackTable();
          const fast = new DumpIndex(fastTable);
          const symbolizer = useSyms ? new Symbolizer(symFile) : null;
          const fastLogs = parsed.map((p) => {
            const log = new DiagnosticLog(p.file);
            fast.add(p, log, symbolizer);
            return log.list();
          });
          fast.seal();
          // the plain path: the same records with their frames already strings, no columns
          const plainTable = new StackTable();
          const plain = new DumpIndex(plainTable);
          const plainLogs = parsed.map((p) => {
            const log = new DiagnosticLog(p.file);
            const records = p.records.map((r) => ({ ...r, frames: Array.from(r.ips!, key), ips: null }));
            plain.add({ ...p, columns: undefined, records }, log);
            return log.list();
          });
          plain.seal();

          expect(fastLogs).toEqual(plainLogs);
          // which slots each generation and each generation-less dump holds, in first-seen order, and
          // how many repeats within one dump were reported (of a slot that dump brought first: a repeat
          // of one an earlier dump brought is merged with that one): by plain loops over the records
          const genSlots = new Map<number, number[]>();
          const ownSlots: number[][] = [];
          const firstDump = new Map<string, number>();
          let repeats = 0;
          parsed.forEach((p, i) => {
            const mine = new Set<string>();
            const own: number[] = [];
            for (const r of p.records) {
              const k = `${r.generation}:${r.slot}`;
              if (r.generation !== null && !firstDump.has(k)) firstDump.set(k, i);
              if (mine.has(k)) {
                if (r.generation === null || firstDump.get(k) === i) repeats++;
                continue;
              }
              mine.add(k);
              if (r.generation === null) own.push(r.slot);
              else {
                const list = genSlots.get(r.generation) ?? [];
                if (!list.includes(r.slot)) list.push(r.slot);
                genSlots.set(r.generation, list);
              }
            }
            if (own.length > 0) ownSlots.push(own);
          });
          expect(fast.generations().map((g) => [g, [...fast.byGeneration.get(g)!.slots.keys()]])).toEqual([...genSlots].sort((x, y) => x[0] - y[0]));
          expect(fast.generationless.map((d) => [...d.slots.keys()])).toEqual(ownSlots);
          expect(
            fastLogs
              .flat()
              .filter((d) => /appears twice in one dump/.test(d.message))
              .reduce((n, d) => n + d.count, 0),
          ).toBe(repeats);
          expect(describeIndex(fastTable, fast)).toEqual(describeIndex(plainTable, plain));
          if (symbolizer) {
            let hits = 0;
            let misses = 0;
            const code = [...symList].sort((a, b) => (a.addr < b.addr ? -1 : 1));
            for (const p of parsed)
              for (const r of p.records)
                for (const x of r.ips!) {
                  if (x === 0x7fffffffn) continue;
                  if (key(x).startsWith('0x')) misses++;
                  else hits++;
                }
            expect([symbolizer.hits, symbolizer.misses], `${code.length} symbols`).toEqual([hits, misses]);
          }
        },
      ),
      { numRuns: 150 },
    );
  });
});

describe('binary dumps through Ingest, in small chunks and renamed `unknown`, against plain string frames (property)', () => {
  const shapes = ['callgraph', 'random'] as const;
  it.each(shapes)("%s: every slot's stack, ref_count and node, and the diagnostics, as symbolizing each ip to a string", (shape) => {
    const dumpArb = fc.record({
      version: fc.constantFrom(1, 2),
      generation: fc.nat({ max: 1 }),
      littleEndian: fc.boolean(),
      seed: fc.integer(),
      records: fc.integer({ min: 0, max: 20 }),
    });
    fc.assert(
      fc.property(
        kernelSpec(150),
        fc.array(dumpArb, { minLength: 1, maxLength: 3 }),
        fc.constantFrom(1, 7, 64),
        fc.boolean(),
        fc.constantFrom(undefined, 0, 5),
        (spec, dumps, chunk, renamed, hashLimitForTests) => {
          const k = kernel(spec);
          const plainSyms = plainSymbolizer(k.lines);
          const bins = dumps.map((d, i) => {
            const ips = stacks(k, shape, d.records, d.seed, 20);
            // slots ascending with gaps; dumps of one generation share some slot numbers
            const records = ips.map((x, r) => ({ slot: 2 * r + (d.seed & 1), refCount: 1 + ((d.seed >>> r) & 7), ips: x }));
            const generation = d.version === 1 ? null : d.generation;
            return {
              name: `stack_map_bin.${i}`,
              generation,
              records,
              bytes: writeStackMapBin({ version: d.version, generation, littleEndian: d.littleEndian, records }),
            };
          });
          // the fast path: files in chunks through Ingest, sniffed by content when renamed
          const ingest = new Ingest({ dumpHashLimitForTests: hashLimitForTests });
          const files = [{ name: 'kallsyms', bytes: new TextEncoder().encode(k.text) }, ...bins];
          files.forEach((f, i) => {
            const p = ingest.open(renamed ? `unknown-${i}` : f.name);
            for (let at = 0; at < f.bytes.length; at += chunk) p.push(f.bytes.subarray(at, at + chunk));
            p.end();
          });
          const c = ingest.finish();
          // the plain path: the records as written (not read back), each ip a string by the BigInt search
          const plainTable = new StackTable();
          const plain = new DumpIndex(plainTable);
          const plainLogs = bins.map((b, i) => {
            const name = renamed ? `unknown-${i + 1}` : b.name;
            const log = new DiagnosticLog(name);
            let where = 16;
            const records = b.records.map((r) => {
              const rec = { slot: r.slot, generation: b.generation, refCount: r.refCount, frames: r.ips.map(plainSyms.key), ips: null, where };
              where += 16 + 8 * r.ips.length;
              return rec;
            });
            plain.add(
              {
                file: name,
                format: 'stack_map_bin',
                version: '',
                generation: b.generation,
                littleEndian: true,
                uninitialized: false,
                records,
                lines: null,
                bytes: null,
              },
              log,
            );
            return log.list();
          });
          plain.seal();
          expect(describeIndex(c.stacks, c.dumps)).toEqual(describeIndex(plainTable, plain));
          expect([c.stacks.size, c.stacks.nodeCount]).toEqual([plainTable.size, plainTable.nodeCount]);
          // what the index said of the dumps (the readers' own diagnostics aside)
          const fromIndex = c.diagnostics.filter(
            (d) => /slot|disagree/.test(d.message) && !/not in ascending order|slot appears twice in the dump/.test(d.message),
          );
          expect(fromIndex).toEqual(plainLogs.flat());
          // hits and misses said about the symbol file: only when misses outnumber hits, as plainly counted
          const warned = c.diagnostics.some((d) => /fall outside every symbol/.test(d.message));
          expect(warned).toBe(plainSyms.counts.misses > plainSyms.counts.hits);
        },
      ),
      { numRuns: 40 },
    );
  });
});
