import { FSMB_MAGIC } from './sniff.ts';

/** Writers for the stack map formats, as the kernel prints them (fixtures, exports, tests). */

// ---------------------------------------------------------------- stack_map text

export interface TextRecordInput {
  slot: number;
  /** v8: this record's generation (overrides the dump's); ignored for v7 */
  generation?: number | null;
  refCount: number;
  /** frames as printed (`sym+0xoff/0xsize [mod]`, `0xffff...`, `[FTRACE TRAMPOLINE]`) or keys, leaf first */
  frames: readonly string[];
}

export interface TextDumpOptions {
  version: 'v7' | 'v8';
  /** v8: generation of records that carry none (default 0) */
  generation?: number | null;
  /** write `stackmap not initialized` (records are ignored) */
  uninitialized?: boolean;
}

/**
 * v7: `stack_id SLOT [ref N, depth D]` + `  [i] FRAME` lines; v8: `stack_id SLOT gen G
 * [ref N, depth D]` + ` => FRAME` lines. Each record is followed by a blank line.
 */
export function writeStackMapText(records: readonly TextRecordInput[], opts: TextDumpOptions): string {
  if (opts.uninitialized) return 'stackmap not initialized\n';
  const out: string[] = [];
  for (const r of records) {
    if (opts.version === 'v8') {
      const gen = r.generation ?? opts.generation ?? 0;
      out.push(`stack_id ${r.slot} gen ${gen} [ref ${r.refCount}, depth ${r.frames.length}]\n`);
      for (const f of r.frames) out.push(` => ${f}\n`);
    } else {
      out.push(`stack_id ${r.slot} [ref ${r.refCount}, depth ${r.frames.length}]\n`);
      r.frames.forEach((f, i) => out.push(`  [${i}] ${f}\n`));
    }
    out.push('\n');
  }
  return out.join('');
}

// ---------------------------------------------------------------- stack_map_bin

export interface BinRecordInput {
  slot: number;
  refCount: number;
  /** raw ips, leaf first */
  ips: BigUint64Array | readonly bigint[];
  /** the per-record reserved word (default 0) */
  reserved?: number;
}

export interface BinDumpInput {
  /** 1 or 2; any other number writes that version with the v2 layout (for tests) */
  version: number;
  /** the header's reserved word for version >= 2; must be null/0 for version 1 */
  generation: number | null;
  littleEndian: boolean;
  records: readonly BinRecordInput[];
  /** header nr_stacks; defaults to records.length (override to write hostile files) */
  nrStacks?: number;
}

export function writeStackMapBin(input: BinDumpInput): Uint8Array {
  let size = 16;
  for (const r of input.records) size += 16 + 8 * r.ips.length;
  const out = new Uint8Array(size);
  const dv = new DataView(out.buffer);
  const le = input.littleEndian;
  dv.setUint32(0, FSMB_MAGIC, le);
  dv.setUint32(4, input.version >>> 0, le);
  dv.setUint32(8, (input.nrStacks ?? input.records.length) >>> 0, le);
  dv.setUint32(12, (input.version === 1 ? 0 : (input.generation ?? 0)) >>> 0, le);
  let off = 16;
  for (const r of input.records) {
    dv.setUint32(off, r.slot >>> 0, le);
    dv.setUint32(off + 4, r.ips.length, le);
    dv.setUint32(off + 8, r.refCount >>> 0, le);
    dv.setUint32(off + 12, (r.reserved ?? 0) >>> 0, le);
    off += 16;
    for (const ip of r.ips) {
      dv.setBigUint64(off, ip, le);
      off += 8;
    }
  }
  return out;
}

// ---------------------------------------------------------------- stack_map_stat

export interface StatV7Input {
  version: 'v7';
  entries: number;
  capacity: number;
  tableSize: number;
  successes: number;
  drops: number;
  /** percent; null or absent: the line is left out */
  successRate?: number | null;
}

export interface StatV8Input {
  version: 'v8';
  generation: number;
  entries: number;
  capacity: number;
  successes: number;
  fallbacks: number;
  /** further `key: value` lines, written after the known ones */
  extra?: readonly [string, string][];
}

export type StatInput = StatV7Input | StatV8Input | { version: 'v7' | 'v8'; uninitialized: true };

/** v7 pads `key:` to 14 columns as the v7 kernel does; v8 writes `key: value`. */
export function writeStackMapStat(stat: StatInput): string {
  if ('uninitialized' in stat) return 'stackmap not initialized\n';
  if (stat.version === 'v7') {
    const line = (k: string, v: string) => (k + ':').padEnd(14) + v + '\n';
    return (
      line('entries', `${stat.entries} / ${stat.capacity}`) +
      line('table_size', String(stat.tableSize)) +
      line('successes', String(stat.successes)) +
      line('drops', String(stat.drops)) +
      (stat.successRate == null ? '' : line('success_rate', `${stat.successRate}%`))
    );
  }
  const lines: [string, string | number][] = [
    ['generation', stat.generation],
    ['entries', stat.entries],
    ['capacity', stat.capacity],
    ['successes', stat.successes],
    ['fallbacks', stat.fallbacks],
    ...(stat.extra ?? []),
  ];
  return lines.map(([k, v]) => `${k}: ${v}\n`).join('');
}
