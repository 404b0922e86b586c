import { frameKey } from './frames.ts';
import type { ChunkParser, DumpRecord, ParseContext, ParsedDump } from './types.ts';

/**
 * `stackmap_dump.py --json` output (DESIGN 2.4): the same map as `stack_map_bin`, without a
 * generation.
 *
 *   [ {"stack_id": 12, "ref_count": 3, "ips": ["0xffffffff81234567", ...], "symbols": [...]}, ... ]
 *
 * or the same list wrapped as `{"stacks": [...]}`. `ips` are hex strings (`0x...`), decimal
 * strings or safe-integer numbers, leaf first. With `symbols` (one string per ip) the frames are
 * their keys; without, `frames` is null and the model symbolizes the ips.
 *
 * JSON dumps are small: the text is buffered (up to MAX_JSON_BYTES) and parsed at `end`.
 * Accounting is by line: when the document parses, every line is used (an entry that is rejected
 * gets a diagnostic naming its index instead); when it does not parse, every line is unused.
 * DumpRecord.where is the entry's index in the list (JSON.parse gives no positions).
 */

export const MAX_JSON_BYTES = 256 * 1024 * 1024;
/** The kernel's maximum stack depth. */
const MAX_DEPTH = 64;
/** Diagnostics per reason that name an entry; the rest are summed up. */
const NAMED_PER_REASON = 5;
const U64_MAX = (1n << 64n) - 1n;

export function createDumpJsonParser(ctx: ParseContext): ChunkParser<ParsedDump> {
  const diag = ctx.diagnostics;
  const chunks: Uint8Array[] = [];
  let size = 0;
  let tooLarge = false;
  // line counting as LineSplitter does: `\n`-terminated lines plus a last unterminated one
  let newlines = 0;
  let lastByte = -1;

  return {
    push(chunk: Uint8Array) {
      for (let i = chunk.indexOf(10); i >= 0; i = chunk.indexOf(10, i + 1)) newlines++;
      if (chunk.length > 0) lastByte = chunk[chunk.length - 1];
      size += chunk.length;
      if (tooLarge) return;
      if (size > MAX_JSON_BYTES) {
        tooLarge = true;
        chunks.length = 0;
        return;
      }
      chunks.push(chunk.slice());
    },
    end(): ParsedDump {
      const total = newlines + (size > 0 && lastByte !== 10 ? 1 : 0);
      const result = (records: DumpRecord[], used: boolean): ParsedDump => ({
        file: ctx.file,
        format: 'dump_json',
        version: 'json',
        generation: null,
        littleEndian: null,
        uninitialized: false,
        records,
        lines: { total, used: used ? total : 0, unused: used ? 0 : total },
        bytes: null,
      });
      if (tooLarge) {
        diag.forFile(`JSON dump larger than ${MAX_JSON_BYTES / 1024 / 1024} MiB: not read`);
        return result([], false);
      }
      const bytes = new Uint8Array(size);
      let o = 0;
      for (const c of chunks) {
        bytes.set(c, o);
        o += c.length;
      }
      chunks.length = 0;
      let text = new TextDecoder('utf-8').decode(bytes);
      if (text.charCodeAt(0) === 0xfeff) text = text.slice(1);
      let doc: unknown;
      try {
        doc = JSON.parse(text);
      } catch (e) {
        diag.forFile(`not valid JSON (${(e as Error).message}): nothing read`);
        return result([], false);
      }
      let list: unknown;
      if (Array.isArray(doc)) list = doc;
      else if (isObject(doc) && Array.isArray(doc.stacks)) list = doc.stacks;
      else {
        diag.forFile('JSON is neither a list of stacks nor {"stacks": [...]}: nothing read');
        return result([], false);
      }
      return result(readEntries(list as unknown[], diag), true);
    },
  };
}

function readEntries(list: unknown[], diag: ParseContext['diagnostics']): DumpRecord[] {
  const records: DumpRecord[] = [];
  const seen = new Set<number>();
  const byReason = new Map<string, number>();
  const reject = (i: number, reason: string) => {
    const n = (byReason.get(reason) ?? 0) + 1;
    byReason.set(reason, n);
    if (n <= NAMED_PER_REASON) diag.forFile(`entry ${i}: ${reason}; skipped`);
  };
  for (let i = 0; i < list.length; i++) {
    const e = list[i];
    if (!isObject(e)) {
      reject(i, 'not an object');
      continue;
    }
    const slot = u32(e.stack_id);
    if (slot === null) {
      reject(i, '"stack_id" missing or not an integer in 0..2^32-1');
      continue;
    }
    const ref = u32(e.ref_count);
    if (ref === null) {
      reject(i, '"ref_count" missing or not an integer in 0..2^32-1');
      continue;
    }
    if (!Array.isArray(e.ips)) {
      reject(i, '"ips" missing or not a list');
      continue;
    }
    const ips = new BigUint64Array(e.ips.length);
    let ok = true;
    for (let k = 0; k < e.ips.length; k++) {
      const ip = u64(e.ips[k]);
      if (ip === null) {
        ok = false;
        break;
      }
      ips[k] = ip;
    }
    if (!ok) {
      reject(i, 'an ip is not a 64-bit address ("0x..." or a number)');
      continue;
    }
    if (seen.has(slot)) {
      reject(i, 'stack_id appears twice in the dump; the first is kept');
      continue;
    }
    seen.add(slot);
    if (ips.length > MAX_DEPTH) diag.forFile(`entry ${i}: depth ${ips.length} above the kernel maximum of ${MAX_DEPTH}`);
    let frames: string[] | null = null;
    if (e.symbols !== undefined && e.symbols !== null) {
      const s = e.symbols;
      if (Array.isArray(s) && s.length === ips.length && s.every((x) => typeof x === 'string')) {
        frames = (s as string[]).map(frameKey);
      } else {
        diag.forFile(`entry ${i}: "symbols" is not a list of ${ips.length} strings: the ips are used`);
      }
    }
    records.push({ slot, generation: null, refCount: ref, frames, ips, where: i });
  }
  for (const [reason, n] of byReason) {
    if (n > NAMED_PER_REASON) diag.forFile(`${n - NAMED_PER_REASON} more entries: ${reason}; skipped`);
  }
  return records;
}

function isObject(x: unknown): x is Record<string, unknown> {
  return typeof x === 'object' && x !== null && !Array.isArray(x);
}

function u32(x: unknown): number | null {
  if (typeof x === 'string' && /^\d{1,10}$/.test(x)) x = Number(x);
  return typeof x === 'number' && Number.isInteger(x) && x >= 0 && x <= 0xffffffff ? x : null;
}

function u64(x: unknown): bigint | null {
  let v: bigint;
  if (typeof x === 'number') {
    if (!Number.isSafeInteger(x) || x < 0) return null;
    v = BigInt(x);
  } else if (typeof x === 'string' && /^(?:0[xX][0-9a-fA-F]{1,16}|\d{1,20})$/.test(x)) {
    v = BigInt(x);
  } else return null;
  return v <= U64_MAX ? v : null;
}
