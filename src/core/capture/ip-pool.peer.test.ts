// A binary dump's frames against perf's own symbolization, on real kernel stacks others published
// (../shared/real-traces/, inferno's perf script files): each kernel frame perf printed as
// `ADDR sym+0xoff` is a real return address with the name and offset perf gave it. A kallsyms
// of those symbols (each one's start: the address less the offset) and a stack_map_bin of the
// samples' kernel stacks are loaded, through the address table and through the page-sorted key
// pass (dumpHashLimitForTests 0); every slot's frames must be perf's, leaf first.
import { expect } from 'vitest';
import { writeStackMapBin } from '../formats/stack-map-write.ts';
import { realIt, realTrace } from '../testing/real-traces.ts';
import { Ingest } from './ingest.ts';

/** A kernel frame perf printed: `\t<16 hex digits> <sym>+0x<hex> (<dso>)`. */
function kernelFrame(line: string): { ip: bigint; key: string; start: bigint; name: string } | null {
  const t = line.trim().split(' ');
  if (t.length < 3 || !/^ffffffff[0-9a-f]{8}$/.test(t[0])) return null;
  const plus = t[1].lastIndexOf('+0x');
  if (plus <= 0) return null;
  const ip = BigInt('0x' + t[0]);
  const off = BigInt(t[1].slice(plus + 1));
  return { ip, key: t[1], start: ip - off, name: t[1].slice(0, plus) };
}

/** Each sample's kernel stack: its frames from the leaf while they are symbolized kernel frames. */
function samples(text: string): { ip: bigint; key: string; start: bigint; name: string }[][] {
  const out: ReturnType<typeof samples> = [];
  let cur: ReturnType<typeof samples>[number] | null = null;
  for (const line of text.split('\n')) {
    if (!/^\s/.test(line) || line.trim() === '') {
      if (cur && cur.length) out.push(cur);
      cur = /^\S/.test(line) ? [] : null;
      continue;
    }
    if (cur === null) continue;
    const f = kernelFrame(line);
    if (f === null) {
      if (cur.length) out.push(cur);
      cur = null;
    } else cur.push(f);
  }
  if (cur && cur.length) out.push(cur);
  return out;
}

for (const file of ['inferno-perf-versioned-vmlinux.txt', 'inferno-perf-java-inline.txt']) {
  realIt(`${file}: every kernel frame of every sample is named as perf named it, both ways of reading a dump`, () => {
    const stacks = samples(new TextDecoder().decode(realTrace(file)));
    expect(stacks.length).toBeGreaterThan(0);
    // the symbols, each at one start
    const starts = new Map<string, bigint>();
    for (const s of stacks) {
      for (const f of s) {
        const at = starts.get(f.name);
        expect(at === undefined || at === f.start, `${f.name} starts at one address`).toBe(true);
        starts.set(f.name, f.start);
      }
    }
    const kallsyms = [...starts]
      .sort((a, b) => (a[1] < b[1] ? -1 : a[1] > b[1] ? 1 : 0))
      .map(([name, start]) => `${start.toString(16)} T ${name}\n`)
      .join('');
    const records = stacks.map((s, i) => ({ slot: i, refCount: 1, ips: BigUint64Array.from(s, (f) => f.ip) }));
    const bin = writeStackMapBin({ version: 2, generation: 1, littleEndian: true, records });
    const distinct = new Set(stacks.flatMap((s) => s.map((f) => f.key)));
    for (const hashLimitForTests of [undefined, 0]) {
      const ingest = new Ingest({ dumpHashLimitForTests: hashLimitForTests });
      for (const [name, bytes] of [
        ['kallsyms', new TextEncoder().encode(kallsyms)],
        ['stack_map_bin', bin],
      ] as const) {
        const p = ingest.open(name);
        p.push(bytes);
        p.end();
      }
      const c = ingest.finish();
      expect(c.diagnostics).toEqual([]);
      const slots = c.dumps.byGeneration.get(1)!.slots;
      expect(slots.size).toBe(stacks.length);
      stacks.forEach((s, i) => {
        expect(c.stacks.framesOf(slots.get(i)!.stack)).toEqual(s.map((f) => f.key));
      });
      // one frame per distinct name
      expect(c.stacks.frames.size).toBe(distinct.size);
    }
  });
}
