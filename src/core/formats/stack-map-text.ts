import { LineSplitter, TOO_LONG } from './lines.ts';
import { frameKey, noteFrameModule } from './frames.ts';
import type { ChunkParser, DumpRecord, ParseContext, ParsedDump } from './types.ts';

/**
 * `stack_map` text dump (DESIGN 2.2).
 *
 *   v4..v7: `stack_id SLOT [ref N, depth D]` then D lines `  [i] FRAME`, blank line after
 *   v8:     `stack_id SLOT gen G [ref N, depth D]` then D lines ` => FRAME`, blank line after
 *
 * Either frame style may follow either header. `stackmap not initialized` is an empty map.
 * Blank lines are record separators and count as used. Every line that is not used has a
 * diagnostic; a record with fewer frames than its depth is kept with the frames it has.
 */

const HEADER = /^\s*stack_id\s+(\d+)(?:\s+gen\s+(\d+))?\s+\[\s*ref\s+(\d+)\s*,\s*depth\s+(\d+)\s*\]\s*$/;
const FRAME_V7 = /^\s*\[\s*(\d+)\s*\]\s+(\S.*)$/;
const FRAME_V8 = /^\s*=>\s*(\S.*)$/;
const NOT_INIT = /^\s*stackmap not initialized\s*$/;

/** The kernel's maximum stack depth. */
export const STACKMAP_MAX_DEPTH = 64;

interface Open {
  rec: DumpRecord;
  frames: string[];
  depth: number;
}

export function createStackMapTextParser(ctx: ParseContext): ChunkParser<ParsedDump> {
  const diag = ctx.diagnostics;
  const records: DumpRecord[] = [];
  let used = 0;
  let unused = 0;
  let uninitialized = false;
  let sawV7Header = false;
  let sawV8Header = false;
  let open: Open | null = null;
  const generations: number[] = []; // distinct, in order of first appearance
  let lastGeneration: number | null = null;
  const seen = new Set<string>();

  const bad = (lineNo: number, reason: string) => {
    unused++;
    diag.atLine(lineNo, reason);
  };

  const close = () => {
    if (!open) return;
    const { rec, frames, depth } = open;
    if (frames.length < depth) {
      diag.atLine(rec.where, `record has ${frames.length} of its ${depth} frames: kept with the frames it has`);
    }
    records.push(rec);
    open = null;
  };

  const onLine = (line: string, lineNo: number) => {
    if (line.trim() === '') {
      used++;
      close();
      return;
    }
    const h = HEADER.exec(line);
    if (h) {
      close();
      const slot = Number(h[1]);
      const gen = h[2] !== undefined ? Number(h[2]) : null;
      const ref = Number(h[3]);
      const depth = Number(h[4]);
      if (!Number.isSafeInteger(slot) || !Number.isSafeInteger(ref) || !Number.isSafeInteger(depth) || (gen !== null && !Number.isSafeInteger(gen))) {
        bad(lineNo, 'record header with a number out of range');
        return;
      }
      if (slot > 0xffffffff || (gen !== null && gen > 0xffffffff)) {
        // the kernel's stack_id and generation are u32s: a larger one would wrap in every reader of it
        bad(lineNo, 'stack_id or generation beyond 32 bits');
        return;
      }
      used++;
      if (gen === null) sawV7Header = true;
      else {
        sawV8Header = true;
        if (!generations.includes(gen)) generations.push(gen);
        lastGeneration = gen;
      }
      if (depth > STACKMAP_MAX_DEPTH) {
        diag.atLine(lineNo, `depth above the kernel maximum of ${STACKMAP_MAX_DEPTH}`);
      }
      const key = `${gen ?? ''}:${slot}`;
      if (seen.has(key)) diag.atLine(lineNo, 'slot appears twice in the dump (same generation)');
      seen.add(key);
      const frames: string[] = [];
      open = {
        rec: { slot, generation: gen, refCount: ref, frames, ips: null, where: lineNo },
        frames,
        depth,
      };
      return;
    }
    if (NOT_INIT.test(line)) {
      used++;
      close();
      uninitialized = true;
      return;
    }
    const v7 = FRAME_V7.exec(line);
    const v8 = v7 ? null : FRAME_V8.exec(line);
    if (v7 || v8) {
      if (!open) {
        bad(lineNo, 'frame line outside a record');
        return;
      }
      if (open.frames.length >= open.depth) {
        bad(lineNo, `frame line beyond the record's depth ${open.depth}`);
        return;
      }
      if (v7) {
        const idx = Number(v7[1]);
        if (idx !== open.frames.length) {
          diag.atLine(lineNo, `frame index [${idx}] where [${open.frames.length}] was expected: kept in file order`);
        }
        open.frames.push(frameKey(v7[2]));
      } else {
        open.frames.push(frameKey(v8![1]));
      }
      const printed = (v7 ? v7[2] : v8![1]).trim();
      noteFrameModule(printed, 0, printed.length, ctx.modules);
      used++;
      return;
    }
    bad(lineNo, 'unrecognized line');
  };

  const splitter = new LineSplitter(onLine, undefined, (lineNo) => bad(lineNo, TOO_LONG));

  return {
    push(chunk: Uint8Array) {
      splitter.push(chunk);
    },
    end(): ParsedDump {
      const total = splitter.end();
      close();
      if (sawV7Header && sawV8Header) {
        diag.forFile('record headers of both v7 (no generation) and v8 (with generation) style');
      }
      if (generations.length > 1) {
        diag.forFile(
          `records of ${generations.length} generations (${generations.join(', ')}): ` +
            'the dump was read across a reset; each record keeps its own generation',
        );
      }
      if (uninitialized && records.length > 0) {
        diag.forFile('"stackmap not initialized" together with records');
      }
      return {
        file: ctx.file,
        format: 'stack_map_text',
        version: sawV8Header ? 'v8' : 'v7',
        generation: lastGeneration,
        littleEndian: null,
        uninitialized,
        records,
        lines: { total, used, unused },
        bytes: null,
      };
    },
  };
}
