import { FSMB_MAGIC } from './sniff.ts';
import { DumpColumnsBuilder } from './dump-columns.ts';
import type { ChunkParser, DumpColumns, DumpRecord, ParseContext, ParsedDump } from './types.ts';

/**
 * `stack_map_bin` binary dump (DESIGN 2.4), as a streaming push parser.
 *
 *   header (16 bytes): magic u32 = 0x46534D42, version u32, nr_stacks u32, reserved u32
 *     version 1: reserved is 0, no generation; version 2: reserved is the generation;
 *     other versions are read as 2 with a diagnostic.
 *   nr_stacks records: stack_id u32, nr u32, ref_count u32, reserved u32, nr x u64 ips
 *
 * All fields in the writer's byte order, decided from the magic.
 *
 * Nothing is allocated from an untrusted count: records are appended as they arrive whole
 * (nr_stacks is only compared against what was read), and a record's `nr` is checked against
 * the kernel's maximum depth (64) before its ips are read, so the parser never holds more
 * than one record (16 + 64 * 8 bytes) of pending input. Records whole in a chunk are read
 * straight from it; only one split across chunks goes through that buffer.
 *
 * The records come out as columns (`ParsedDump.columns`: typed arrays, every ip as two 32-bit
 * halves, no BigInt); `records` is built from them only when something asks for it.
 *
 * A record whose `nr` exceeds 64 cannot come from the kernel. Records carry no marker or
 * checksum, so once a length is wrong the following record boundaries are unknown and any
 * resync would be a guess that could invent stacks: the parser stops there, keeps the
 * records before it, and counts the rest of the file as unused with one diagnostic.
 */

export const BIN_HEADER_BYTES = 16;
export const BIN_RECORD_HEADER_BYTES = 16;
export const BIN_MAX_DEPTH = 64;
/** The largest map (bits 18) holds 2^18 elements, so no dump has more records than this. */
export const BIN_MAX_RECORDS = 1 << 18;

type State = 'header' | 'record' | 'extra' | 'skip';

/** The columns as DumpRecords (`ips` as a BigUint64Array each), for readers that want objects. */
export function recordsOf(c: DumpColumns, generation: number | null): DumpRecord[] {
  const out: DumpRecord[] = new Array(c.count);
  for (let r = 0; r < c.count; r++) {
    const ips = new BigUint64Array(c.depth[r]);
    const s = c.start[r];
    const hi = c.ipHi[c.block[r]];
    const lo = c.ipLo[c.block[r]];
    for (let k = 0; k < ips.length; k++) ips[k] = (BigInt(hi[s + k]) << 32n) | BigInt(lo[s + k]);
    out[r] = { slot: c.slot[r], generation, refCount: c.refCount[r], frames: null, ips, where: c.where[r] };
  }
  return out;
}

export function createStackMapBinParser(ctx: ParseContext): ChunkParser<ParsedDump> {
  const diag = ctx.diagnostics;
  const buf = new Uint8Array(BIN_RECORD_HEADER_BYTES + BIN_MAX_DEPTH * 8);
  const dv = new DataView(buf.buffer);
  let have = 0;
  let need = BIN_HEADER_BYTES;
  let state: State = 'header';

  let total = 0;
  let used = 0; // bytes of the header and whole records; also the offset of the item being read
  let skipFrom = -1;
  let skipReason = '';

  let le = true;
  let littleEndian: boolean | null = null;
  let version = 0;
  let nrStacks = 0;
  let generation: number | null = null;
  const cols = new DumpColumnsBuilder();
  let lastSlot = -1;
  // current record header, once read (the slow path, for a record split across chunks)
  let recNr = -1;

  const stop = (reason: string) => {
    state = 'skip';
    skipFrom = used;
    skipReason = reason;
    have = 0;
  };

  const afterRecords = () => {
    if (cols.count >= nrStacks) state = 'extra';
    else if (cols.count >= BIN_MAX_RECORDS) {
      stop(`more than ${BIN_MAX_RECORDS.toLocaleString('en-US')} records, the most the largest map (bits 18) holds: the rest is not read`);
      return;
    } else {
      state = 'record';
      need = BIN_RECORD_HEADER_BYTES;
      recNr = -1;
    }
    have = 0;
  };

  /** A record's nr, or -1 (and reading stops) when no kernel could have written it. */
  const checkedNr = (nr: number): number => {
    if (nr <= BIN_MAX_DEPTH) return nr;
    stop(`record claims ${nr} frames (kernel maximum ${BIN_MAX_DEPTH}): the record boundaries ` + 'after it are unknown, so reading stops here');
    return -1;
  };

  /** Takes the whole record whose header is at `off` of `view` (nr already checked), ips after it. */
  const take = (view: DataView, off: number, nr: number) => {
    const slot = view.getUint32(off, le);
    const at = cols.record(slot, view.getUint32(off + 8, le), used, nr);
    const hi = cols.hi;
    const lo = cols.lo;
    let p = off + BIN_RECORD_HEADER_BYTES;
    if (le) {
      for (let k = 0; k < nr; k++, p += 8) {
        lo[at + k] = view.getUint32(p, true);
        hi[at + k] = view.getUint32(p + 4, true);
      }
    } else {
      for (let k = 0; k < nr; k++, p += 8) {
        hi[at + k] = view.getUint32(p, false);
        lo[at + k] = view.getUint32(p + 4, false);
      }
    }
    // (the offset goes with the diagnostic, not in its text: every such record groups as one)
    if (view.getUint32(off + 12, le) !== 0) diag.atOffset(used, 'record reserved word is not 0 (the kernel writes 0): the record is read as if it were');
    if (slot <= lastSlot) {
      diag.atOffset(used, slot === lastSlot ? 'slot appears twice in the dump' : 'slots not in ascending order');
    }
    lastSlot = Math.max(lastSlot, slot);
    used += BIN_RECORD_HEADER_BYTES + 8 * nr;
    afterRecords();
  };

  /** Called when `need` bytes are in `buf`. */
  const process = () => {
    if (state === 'header') {
      if (dv.getUint32(0, true) === FSMB_MAGIC) le = true;
      else if (dv.getUint32(0, false) === FSMB_MAGIC) le = false;
      else {
        stop('bad magic (not 0x46534D42 in either byte order): not a stack_map_bin file');
        return;
      }
      littleEndian = le;
      version = dv.getUint32(4, le);
      nrStacks = dv.getUint32(8, le);
      const reserved = dv.getUint32(12, le);
      if (version === 1) {
        if (reserved !== 0) diag.atOffset(12, `version 1 header reserved word is ${reserved}, expected 0`);
        generation = null;
      } else {
        if (version !== 2) diag.atOffset(4, `unknown version ${version}: read as version 2`);
        generation = reserved;
      }
      used += BIN_HEADER_BYTES;
      afterRecords();
      return;
    }
    // state === 'record'
    if (recNr < 0) {
      const nr = checkedNr(dv.getUint32(4, le));
      if (nr < 0) return;
      recNr = nr;
      if (nr > 0) {
        need = BIN_RECORD_HEADER_BYTES + nr * 8;
        return; // keep the header bytes in buf, read the ips after them
      }
    }
    take(dv, 0, recNr);
  };

  /** Whole records straight from `chunk` from `i` on, while they are whole; returns where it stopped. */
  const fast = (chunk: Uint8Array, i: number): number => {
    const view = new DataView(chunk.buffer, chunk.byteOffset, chunk.byteLength);
    const end = chunk.length;
    while (state === 'record' && end - i >= BIN_RECORD_HEADER_BYTES) {
      const nr = checkedNr(view.getUint32(i + 4, le));
      if (nr < 0) break;
      const size = BIN_RECORD_HEADER_BYTES + 8 * nr;
      if (end - i < size) break;
      take(view, i, nr);
      i += size;
    }
    return i;
  };

  return {
    push(chunk: Uint8Array) {
      total += chunk.length;
      let i = 0;
      while (i < chunk.length) {
        if (state === 'skip' || state === 'extra') return;
        if (state === 'record' && have === 0) {
          i = fast(chunk, i);
          if (state !== 'record' || i === chunk.length) continue;
        }
        const n = Math.min(need - have, chunk.length - i);
        buf.set(chunk.subarray(i, i + n), have);
        have += n;
        i += n;
        if (have === need) process();
      }
    },
    end(): ParsedDump {
      const unused = total - used;
      const count = cols.count;
      if (total === 0) diag.forFile('empty file');
      else if (state === 'header') {
        diag.atOffset(0, `truncated header: ${total} of ${BIN_HEADER_BYTES} bytes`);
      } else if (state === 'record') {
        if (have > 0) {
          const what =
            recNr < 0 ? `${have} of ${BIN_RECORD_HEADER_BYTES} bytes of a record header` : `${have} of ${need} bytes of a record with ${recNr} frames`;
          diag.atOffset(used, `truncated record: ${what}`);
        }
        diag.atOffset(used, `header claims ${nrStacks} records, the file holds ${count} whole records`);
      } else if (state === 'extra' && unused > 0) {
        diag.atOffset(used, `${unused} bytes after the ${nrStacks} records the header claims`);
      } else if (state === 'skip') {
        diag.atOffset(skipFrom, `${skipReason}; ${total - skipFrom} bytes not read`);
      }
      const columns = cols.done();
      let records: DumpRecord[] | null = null;
      return {
        file: ctx.file,
        format: 'stack_map_bin',
        version: littleEndian === null ? 'unknown' : String(version),
        generation,
        littleEndian,
        uninitialized: false,
        get records(): DumpRecord[] {
          return (records ??= recordsOf(columns, generation));
        },
        columns,
        lines: null,
        bytes: { total, used, unused },
      };
    },
  };
}
