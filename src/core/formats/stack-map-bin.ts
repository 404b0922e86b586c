import { FSMB_MAGIC } from './sniff.ts';
import type { ChunkParser, DumpRecord, ParseContext, ParsedDump } from './types.ts';

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
 * the kernel's maximum depth (64) before its ips are buffered, so the parser never holds more
 * than one record (16 + 64 * 8 bytes) of pending input.
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
  const records: DumpRecord[] = [];
  let lastSlot = -1;
  // current record header, once read
  let recSlot = 0;
  let recNr = -1;
  let recRef = 0;

  const u32 = (off: number) => dv.getUint32(off, le);

  const stop = (reason: string) => {
    state = 'skip';
    skipFrom = used;
    skipReason = reason;
    have = 0;
  };

  const afterRecords = () => {
    if (records.length >= nrStacks) state = 'extra';
    else if (records.length >= BIN_MAX_RECORDS) {
      stop(`more than ${BIN_MAX_RECORDS.toLocaleString('en-US')} records, the most the largest map (bits 18) holds: the rest is not read`);
      return;
    } else {
      state = 'record';
      need = BIN_RECORD_HEADER_BYTES;
      recNr = -1;
    }
    have = 0;
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
      version = u32(4);
      nrStacks = u32(8);
      const reserved = u32(12);
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
      const nr = u32(4);
      if (nr > BIN_MAX_DEPTH) {
        stop(
          `record claims ${nr} frames (kernel maximum ${BIN_MAX_DEPTH}): the record boundaries ` +
            'after it are unknown, so reading stops here',
        );
        return;
      }
      recSlot = u32(0);
      recRef = u32(8);
      recNr = nr;
      if (nr > 0) {
        need = BIN_RECORD_HEADER_BYTES + nr * 8;
        return; // keep the header bytes in buf, read the ips after them
      }
    }
    const ips = new BigUint64Array(recNr);
    for (let i = 0; i < recNr; i++) ips[i] = dv.getBigUint64(BIN_RECORD_HEADER_BYTES + i * 8, le);
    if (recSlot <= lastSlot) {
      diag.atOffset(used, recSlot === lastSlot ? 'slot appears twice in the dump' : 'slots not in ascending order');
    }
    lastSlot = Math.max(lastSlot, recSlot);
    records.push({ slot: recSlot, generation, refCount: recRef, frames: null, ips, where: used });
    used += need;
    afterRecords();
  };

  return {
    push(chunk: Uint8Array) {
      total += chunk.length;
      let i = 0;
      while (i < chunk.length) {
        if (state === 'skip' || state === 'extra') return;
        const take = Math.min(need - have, chunk.length - i);
        buf.set(chunk.subarray(i, i + take), have);
        have += take;
        i += take;
        if (have === need) process();
      }
    },
    end(): ParsedDump {
      const unused = total - used;
      if (total === 0) diag.forFile('empty file');
      else if (state === 'header') {
        diag.atOffset(0, `truncated header: ${total} of ${BIN_HEADER_BYTES} bytes`);
      } else if (state === 'record') {
        if (have > 0) {
          const what = recNr < 0 ? `${have} of ${BIN_RECORD_HEADER_BYTES} bytes of a record header`
            : `${have} of ${need} bytes of a record with ${recNr} frames`;
          diag.atOffset(used, `truncated record: ${what}`);
        }
        diag.atOffset(
          used,
          `header claims ${nrStacks} records, the file holds ${records.length} whole records`,
        );
      } else if (state === 'extra' && unused > 0) {
        diag.atOffset(used, `${unused} bytes after the ${nrStacks} records the header claims`);
      } else if (state === 'skip') {
        diag.atOffset(skipFrom, `${skipReason}; ${total - skipFrom} bytes not read`);
      }
      return {
        file: ctx.file,
        format: 'stack_map_bin',
        version: littleEndian === null ? 'unknown' : String(version),
        generation,
        littleEndian,
        uninitialized: false,
        records,
        lines: null,
        bytes: { total, used, unused },
      };
    },
  };
}
