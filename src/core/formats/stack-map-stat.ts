import { LineSplitter, TOO_LONG } from './lines.ts';
import type { ChunkParser, ParseContext, ParsedStat } from './types.ts';

/**
 * `stack_map_stat` (DESIGN 2.3).
 *
 *   v7: `entries:      2500 / 16384`, `table_size:   32768`, `successes:    148923`,
 *       `drops:        0`, `success_rate: 100%` (the last may be absent)
 *   v8: one `key: value` per line: `generation`, `entries`, `capacity`, `successes`,
 *       `fallbacks`, and any others (kept in `values`).
 *
 * Version v8 when a `fallbacks`, `generation` or `capacity` key is present, else v7.
 * `drops` is v7 `drops` or v8 `fallbacks`. Blank lines count as used; a line that is not
 * `key: value` is unused and diagnosed; a known key with a value that does not parse is
 * kept in `values`, counted as used and diagnosed.
 */

/** `key:` at the start; the value is the rest, trimmed (by trim(), not a lazy group before `\s*$`, which is quadratic on blanks) */
const KEY = /^\s*([A-Za-z_][\w.-]*)\s*:/;
const NOT_INIT = /^\s*stackmap not initialized\s*$/;
const INT = /^\d+$/;
const ENTRIES_V7 = /^(\d+)\s*\/\s*(\d+)$/;
const RATE = /^(\d+(?:\.\d+)?)\s*%?$/;
const V8_KEYS = new Set(['fallbacks', 'generation', 'capacity']);
const KNOWN_KEYS = new Set(['entries', 'capacity', 'table_size', 'successes', 'drops', 'fallbacks', 'generation', 'success_rate']);
/** Distinct unknown keys kept (and shown); lines of others are counted in one diagnostic (issue 34, 15). */
export const MAX_UNKNOWN_KEYS = 100;

export function createStackMapStatParser(ctx: ParseContext): ChunkParser<ParsedStat> {
  const diag = ctx.diagnostics;
  const values: [string, string][] = [];
  const seen = new Set<string>();
  let unknownKept = 0;
  let used = 0;
  let unused = 0;
  let uninitialized = false;
  let v8 = false;
  let entries: number | null = null;
  let capacity: number | null = null;
  let tableSize: number | null = null;
  let successes: number | null = null;
  let drops: number | null = null;
  let fallbacks: number | null = null;
  let generation: number | null = null;
  let successRate: number | null = null;

  const onLine = (line: string, lineNo: number) => {
    if (line.trim() === '') {
      used++;
      return;
    }
    if (NOT_INIT.test(line)) {
      used++;
      uninitialized = true;
      return;
    }
    const m = KEY.exec(line);
    if (!m) {
      unused++;
      diag.atLine(lineNo, 'unrecognized line (not "key: value")');
      return;
    }
    const key = m[1];
    if (!KNOWN_KEYS.has(key) && !seen.has(key)) {
      if (unknownKept >= MAX_UNKNOWN_KEYS) {
        // one grouped diagnostic (its first lines and a count), not a kept value each
        unused++;
        diag.atLine(lineNo, `a key no kernel writes, past the first ${MAX_UNKNOWN_KEYS} kept: not kept`);
        return;
      }
      unknownKept++;
    }
    used++;
    const value = line.slice(m[0].length).trim();
    values.push([key, value]);
    if (seen.has(key)) diag.atLine(lineNo, `key "${key}" appears twice: the last value is used`);
    seen.add(key);
    if (V8_KEYS.has(key)) v8 = true;
    const int = (): number | null => {
      if (INT.test(value)) {
        const v = Number(value);
        if (Number.isSafeInteger(v)) return v;
        diag.atLine(lineNo, `value of "${key}" beyond 2^53 (not exact as a number): kept as text only`);
        return null;
      }
      diag.atLine(lineNo, `value of "${key}" is not a number`);
      return null;
    };
    switch (key) {
      case 'entries': {
        const e = ENTRIES_V7.exec(value);
        if (e) {
          entries = Number(e[1]);
          capacity = Number(e[2]);
        } else entries = int();
        break;
      }
      case 'capacity':
        capacity = int();
        break;
      case 'table_size':
        tableSize = int();
        break;
      case 'successes':
        successes = int();
        break;
      case 'drops':
        drops = int();
        break;
      case 'fallbacks':
        fallbacks = int();
        break;
      case 'generation':
        generation = int();
        break;
      case 'success_rate': {
        const r = RATE.exec(value);
        if (r) successRate = Number(r[1]);
        else diag.atLine(lineNo, 'value of "success_rate" is not a percentage');
        break;
      }
      default:
        break; // unknown keys are kept in `values`
    }
  };

  const splitter = new LineSplitter(onLine, undefined, (lineNo) => {
    unused++;
    diag.atLine(lineNo, TOO_LONG);
  });

  return {
    push(chunk: Uint8Array) {
      splitter.push(chunk);
    },
    end(): ParsedStat {
      const total = splitter.end();
      if (drops !== null && fallbacks !== null) {
        diag.forFile('both "drops" and "fallbacks" present: "fallbacks" is used');
      }
      if (uninitialized && values.length > 0) diag.forFile('"stackmap not initialized" together with counters');
      return {
        file: ctx.file,
        version: v8 ? 'v8' : 'v7',
        uninitialized,
        values,
        entries,
        capacity,
        tableSize,
        successes,
        drops: fallbacks ?? drops,
        generation,
        successRate,
        lines: { total, used, unused },
      };
    },
  };
}
