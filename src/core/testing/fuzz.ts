import { gzipSync, zipSync } from 'fflate';
import { loadFiles, type NamedBlob } from '../capture/load.ts';

/**
 * Mutation fuzzing of whole captures through `loadFiles` (the path the page and the command line
 * share): valid files cut at record and line boundaries and at random points, bit flips, lying
 * counts, swapped byte order, junk lines, NUL bytes, invalid UTF-8, CRLF, and archive nesting.
 * Each case must load without throwing, within a time bound, with every file's lines and bytes
 * adding up. `fuzz.test.ts` runs a bounded number of cases in `npm test`; `npm run fuzz` runs
 * more (scripts/fuzz.ts) and keeps any failing input in the regression corpus.
 */

export interface Seed {
  name: string;
  bytes: Uint8Array;
}

export interface FuzzCase {
  /** what was done to which seed, enough to make it again */
  label: string;
  files: Seed[];
}

export interface FuzzFailure {
  label: string;
  reason: string;
}

/** The simulator's seeded PRNG (mulberry32), so a case can be made again from its seed. */
export { Rng as Prng } from '../sim/random.ts';
import type { Rng as Prng } from '../sim/random.ts';

const enc = new TextEncoder();
const concat = (...parts: Uint8Array[]) => {
  const out = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
  let o = 0;
  for (const p of parts) (out.set(p, o), (o += p.length));
  return out;
};

/** Offsets where a record or a line starts: stack_map_bin records, else line starts. */
export function boundaries(b: Uint8Array): number[] {
  const out: number[] = [0];
  const dv = new DataView(b.buffer, b.byteOffset, b.byteLength);
  if (b.length >= 16 && (dv.getUint32(0, true) === 0x46534d42 || dv.getUint32(0, false) === 0x46534d42)) {
    const le = dv.getUint32(0, true) === 0x46534d42;
    let off = 16;
    out.push(16);
    while (off + 16 <= b.length) {
      const nr = dv.getUint32(off + 4, le);
      if (nr > 64) break;
      off += 16 + nr * 8;
      if (off > b.length) break;
      out.push(off);
    }
    return out;
  }
  for (let i = 0; i < b.length; i++) if (b[i] === 10) out.push(i + 1);
  return out;
}

type Mutation = (b: Uint8Array, r: Prng) => { label: string; bytes: Uint8Array };

export const MUTATIONS: Record<string, Mutation> = {
  'cut at a boundary': (b, r) => {
    const at = r.pick(boundaries(b));
    return { label: `cut at ${at}`, bytes: b.slice(0, at) };
  },
  'cut anywhere': (b, r) => {
    const at = r.int(b.length + 1);
    return { label: `cut at ${at}`, bytes: b.slice(0, at) };
  },
  'bit flips': (b, r) => {
    const out = b.slice();
    const n = 1 + r.int(8);
    for (let k = 0; k < n && out.length; k++) out[r.int(out.length)] ^= 1 << r.int(8);
    return { label: `${n} bit flips`, bytes: out };
  },
  'lying count': (b, r) => {
    const out = b.slice();
    const dv = new DataView(out.buffer);
    const lie = r.pick([0, 1, 0x7fffffff, 0xffffffff, r.int(1 << 20)]);
    const at =
      out.length >= 16
        ? r.pick([
            8,
            ...boundaries(out)
              .filter((o) => o + 8 <= out.length)
              .map((o) => o + 4),
          ])
        : 0;
    if (at + 4 <= out.length) dv.setUint32(at, lie, r.next() < 0.5);
    return { label: `u32 ${lie} at ${at}`, bytes: out };
  },
  'swapped byte order': (b) => {
    const out = b.slice();
    for (let i = 0; i + 4 <= out.length; i += 4) [out[i], out[i + 1], out[i + 2], out[i + 3]] = [out[i + 3], out[i + 2], out[i + 1], out[i]];
    return { label: 'u32 byte order swapped', bytes: out };
  },
  'junk line': (b, r) => {
    const lines = boundaries(b);
    const at = r.pick(lines);
    const junk = r.pick([
      'garbage line\n',
      ' => \n',
      '<stack_id x>\n',
      'stack_id 9 [ref, depth 999999999]\n',
      '   \u00a0\u3000 -- <( =>\n',
      'CPU:99 [LOST 4294967296 EVENTS]\n',
      ' '.repeat(70000) + '\n',
    ]);
    return { label: `junk ${JSON.stringify(junk.slice(0, 20))} at ${at}`, bytes: concat(b.subarray(0, at), enc.encode(junk), b.subarray(at)) };
  },
  'NUL bytes': (b, r) => {
    const at = r.int(b.length + 1);
    return { label: `NULs at ${at}`, bytes: concat(b.subarray(0, at), new Uint8Array(1 + r.int(64)), b.subarray(at)) };
  },
  'invalid UTF-8': (b, r) => {
    const at = r.int(b.length + 1);
    return {
      label: `bad UTF-8 at ${at}`,
      bytes: concat(b.subarray(0, at), new Uint8Array(r.pick([[0xff], [0xc3], [0x80, 0x80], [0xed, 0xa0, 0x80], [0xf4, 0x90, 0x80, 0x80]])), b.subarray(at)),
    };
  },
  CRLF: (b) => {
    const out: number[] = [];
    for (const x of b) {
      if (x === 10) out.push(13);
      out.push(x);
    }
    return { label: 'CRLF', bytes: new Uint8Array(out) };
  },
  'archive nesting': (b, r) => {
    let bytes = b;
    const layers: string[] = [];
    const n = 1 + r.int(5);
    for (let k = 0; k < n; k++) {
      if (r.next() < 0.5) {
        bytes = gzipSync(bytes);
        layers.push('gz');
      } else {
        bytes = zipSync({ [`f${k}`]: bytes });
        layers.push('zip');
      }
    }
    if (r.next() < 0.3) {
      bytes = concat(bytes, enc.encode('trailing junk'));
      layers.push('+junk');
    }
    return { label: layers.join('>'), bytes };
  },
};

/** A case: a few seeds of one capture, one of them mutated once or twice. */
export function makeCase(seeds: Seed[], r: Prng): FuzzCase {
  const files = seeds.filter(() => r.next() < 0.6);
  if (files.length === 0) files.push(r.pick(seeds));
  const i = r.int(files.length);
  let bytes = files[i].bytes;
  const labels: string[] = [];
  const rounds = 1 + r.int(2);
  for (let k = 0; k < rounds; k++) {
    const name = r.pick(Object.keys(MUTATIONS));
    const m = MUTATIONS[name](bytes, r);
    bytes = m.bytes;
    labels.push(`${name} (${m.label})`);
  }
  const out = files.map((f, k) => (k === i ? { name: f.name, bytes } : f));
  return {
    label: `${files[i].name}: ${labels.join(', then ')}; with ${
      files
        .filter((_, k) => k !== i)
        .map((f) => f.name)
        .join(', ') || 'nothing else'
    }`,
    files: out,
  };
}

/** Loads a case; null when it held, else why not. */
export async function runCase(c: FuzzCase, maxMs: number): Promise<string | null> {
  const blobs: NamedBlob[] = c.files.map((f) => ({ name: f.name, blob: new Blob([f.bytes as Uint8Array<ArrayBuffer>]) }));
  const t = performance.now();
  let capture;
  try {
    capture = await loadFiles(blobs);
  } catch (e) {
    return `threw ${(e as Error).stack ?? e}`;
  }
  const ms = performance.now() - t;
  if (ms > maxMs) return `took ${Math.round(ms)} ms (bound ${maxMs} ms)`;
  for (const f of capture.files) {
    if (f.lines && f.lines.used + f.lines.unused !== f.lines.total) return `${f.file}: lines ${f.lines.used} + ${f.lines.unused} != ${f.lines.total}`;
    if (f.bytes && f.bytes.used + f.bytes.unused !== f.bytes.total) return `${f.file}: bytes ${f.bytes.used} + ${f.bytes.unused} != ${f.bytes.total}`;
  }
  return null;
}
