import { LineSplitter, TOO_LONG } from './lines.ts';
import type { ChunkParser, LineCount, ParseContext } from './types.ts';

/**
 * `capture.txt`, the record scripts/capture.sh writes into its bundle:
 *
 *   # stackmap explorer capture, by capture.sh, 2026-12-01T10:00:00Z
 *   # tracefs: /sys/kernel/tracing
 *   # kernel release (uname -r): 6.1.0
 *   # host (uname -n): pixel-7                   (since issue 23; older captures lack it)
 *   # machine (uname -m): aarch64
 *   # buffer_size_kb: 4096 (per CPU, read from tracefs before the restore)
 *   # cpus: 8 (per_cpu/cpu* in tracefs)
 *   # stack map: yes, 3 dumps, 2 resets          (or: # stack map: none (options/stackmap absent), ...)
 *   # interrupted
 *   # warning: /proc/kallsyms reads as all-zero addresses: ...
 *   # set buffer_size_kb = 4096 (was 1408)
 *
 * Read line by line with prefix tests and index searches (no regex), each line at most
 * MAX_INFO_LINE characters. A line that is none of these is unused and diagnosed; a known key
 * whose value does not read (a size that is not a number) is used, kept as null and diagnosed.
 */

export const CAPTURE_TXT_HEAD = '# stackmap explorer capture, by ';
/** a capture.txt line is short; a longer one is reported, not read */
export const MAX_INFO_LINE = 4096;
/** `# set` and `# warning` lines kept; more are reported, not kept */
export const MAX_INFO_LIST = 256;

export interface OptionSet {
  /** the tracefs file, e.g. `options/stackmap`, `buffer_size_kb` */
  file: string;
  value: string;
  /** its value before the capture (restored at the end) */
  was: string;
}

export interface CaptureFacts {
  /** the writer, `capture.sh` */
  tool: string;
  /** when it was written, as the script printed it (UTC) */
  date: string;
  tracefs: string | null;
  kernelRelease: string | null;
  /** the machine's node name (uname -n); null when capture.sh did not record it (before issue 23) */
  host: string | null;
  /** its hardware name (uname -m: x86_64, aarch64); null when not recorded */
  machine: string | null;
  /** per-CPU ring buffer in force during the capture, KiB (tracefs's buffer_size_kb counts 1024-byte units); null when unknown */
  bufferKb: number | null;
  /** CPUs with a ring buffer (per_cpu/cpu* in tracefs); null when unknown */
  cpus: number | null;
  /** 'yes': the stack map was on; 'none': the kernel has none (full stacks) */
  stackMap: 'yes' | 'none' | null;
  dumps: number | null;
  resets: number | null;
  interrupted: boolean;
  warnings: string[];
  set: OptionSet[];
}

export interface ParsedCaptureInfo {
  /** null when the first line is not capture.sh's header */
  facts: CaptureFacts | null;
  lines: LineCount;
}

/** `s` as a whole number when it is only digits (at most 15), else null. */
function uint(s: string): number | null {
  if (s.length === 0 || s.length > 15) return null;
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c < 48 || c > 57) return null;
  }
  return Number(s);
}

/** The first word of `s` (up to a blank), trimmed. */
function firstWord(s: string): string {
  const t = s.trim();
  const sp = t.indexOf(' ');
  return sp < 0 ? t : t.slice(0, sp);
}

/** `yes, 3 dumps, 2 resets` -> [3, 2]; null parts when absent or not numbers. */
function dumpsAndResets(rest: string): { dumps: number | null; resets: number | null } {
  let dumps: number | null = null;
  let resets: number | null = null;
  for (const part of rest.split(',')) {
    const p = part.trim();
    if (p.endsWith(' dumps')) dumps = uint(p.slice(0, -' dumps'.length));
    else if (p.endsWith(' resets')) resets = uint(p.slice(0, -' resets'.length));
  }
  return { dumps, resets };
}

export function createCaptureInfoParser(ctx: ParseContext): ChunkParser<ParsedCaptureInfo> {
  const diag = ctx.diagnostics;
  let facts: CaptureFacts | null = null;
  let used = 0;
  let unused = 0;
  let first = true;
  const seen = new Set<string>();
  const unusedLine = (lineNo: number, why: string) => {
    unused++;
    diag.atLine(lineNo, why);
  };
  /** a key written once; a second one wins, with a diagnostic */
  const once = (key: string, lineNo: number) => {
    if (seen.has(key)) diag.atLine(lineNo, `"${key}" appears twice: the last value is used`);
    seen.add(key);
  };

  const onLine = (line: string, lineNo: number) => {
    if (line.trim() === '') {
      used++;
      return;
    }
    if (line.length > MAX_INFO_LINE)
      return unusedLine(lineNo, `line longer than ${MAX_INFO_LINE.toLocaleString('en-US')} characters: not read (capture.sh writes short lines)`);
    if (first) {
      first = false;
      if (!line.startsWith(CAPTURE_TXT_HEAD)) {
        unusedLine(lineNo, 'not the header capture.sh writes ("# stackmap explorer capture, by ..."): nothing in this file is read');
        return;
      }
      const rest = line.slice(CAPTURE_TXT_HEAD.length);
      const comma = rest.indexOf(',');
      facts = {
        tool: (comma < 0 ? rest : rest.slice(0, comma)).trim(),
        date: comma < 0 ? '' : rest.slice(comma + 1).trim(),
        tracefs: null,
        kernelRelease: null,
        host: null,
        machine: null,
        bufferKb: null,
        cpus: null,
        stackMap: null,
        dumps: null,
        resets: null,
        interrupted: false,
        warnings: [],
        set: [],
      };
      used++;
      return;
    }
    if (!facts) return unusedLine(lineNo, "after a first line that is not capture.sh's header: not read");
    const f: CaptureFacts = facts;
    if (!line.startsWith('# ')) return unusedLine(lineNo, 'not a line capture.sh writes (each starts with "# ")');
    const body = line.slice(2);
    const colon = body.indexOf(': ');
    const key = colon < 0 ? body.trimEnd() : body.slice(0, colon);
    const value = colon < 0 ? '' : body.slice(colon + 2).trim();
    if (key === 'interrupted') {
      used++;
      f.interrupted = true;
      return;
    }
    if (key.startsWith('set ')) {
      // `set FILE = VALUE (was OLD)`: the last " (was " ends the value (a value may hold spaces)
      const s = body.slice(4);
      const eq = s.indexOf(' = ');
      const was = s.lastIndexOf(' (was ');
      if (eq < 0 || was < eq || !s.endsWith(')')) return unusedLine(lineNo, 'a "# set" line that is not "FILE = VALUE (was OLD)"');
      if (f.set.length >= MAX_INFO_LIST) return unusedLine(lineNo, `more than ${MAX_INFO_LIST} "# set" lines: the rest are not kept`);
      used++;
      f.set.push({ file: s.slice(0, eq), value: s.slice(eq + 3, was), was: s.slice(was + 6, -1) });
      return;
    }
    switch (key) {
      case 'tracefs':
        once(key, lineNo);
        f.tracefs = value;
        break;
      case 'kernel release (uname -r)':
        once(key, lineNo);
        f.kernelRelease = value === '' ? null : value;
        break;
      case 'host (uname -n)':
        once(key, lineNo);
        f.host = value === '' ? null : value;
        break;
      case 'machine (uname -m)':
        once(key, lineNo);
        f.machine = value === '' ? null : value;
        break;
      case 'buffer_size_kb':
      case 'cpus': {
        once(key, lineNo);
        const w = firstWord(value);
        const n = uint(w);
        if (n === null && w !== 'unknown') diag.atLine(lineNo, `value of "${key}" is not a number: ${w.slice(0, 40)}`);
        if (key === 'cpus') f.cpus = n;
        else f.bufferKb = n !== null && n > 0 ? n : null;
        break;
      }
      case 'stack map': {
        once(key, lineNo);
        if (value.startsWith('yes')) {
          f.stackMap = 'yes';
          const dr = dumpsAndResets(value.slice(3));
          f.dumps = dr.dumps;
          f.resets = dr.resets;
        } else if (value.startsWith('none')) f.stackMap = 'none';
        else diag.atLine(lineNo, 'a "# stack map" line that is neither "yes, ..." nor "none ..."');
        break;
      }
      case 'warning':
        if (f.warnings.length >= MAX_INFO_LIST) return unusedLine(lineNo, `more than ${MAX_INFO_LIST} warnings: the rest are not kept`);
        f.warnings.push(value);
        break;
      default:
        return unusedLine(lineNo, 'not a line capture.sh writes');
    }
    used++;
  };

  const splitter = new LineSplitter(onLine, undefined, (lineNo) => unusedLine(lineNo, TOO_LONG));
  return {
    push: (chunk) => splitter.push(chunk),
    end(): ParsedCaptureInfo {
      const total = splitter.end();
      if (!facts && total > 0) diag.forFile('not a capture.txt that capture.sh wrote');
      return { facts, lines: { total, used, unused } };
    },
  };
}

/** The facts in a few words, for the Files pane and `cli summary`. */
export function describeCapture(f: CaptureFacts): string {
  const parts = [`by ${f.tool}${f.date ? ` at ${f.date}` : ''}`];
  if (f.host) parts.push(`host ${f.host}${f.machine ? ` (${f.machine})` : ''}`);
  else if (f.machine) parts.push(f.machine);
  if (f.kernelRelease) parts.push(`kernel ${f.kernelRelease}`);
  parts.push(f.bufferKb !== null ? `buffer ${f.bufferKb} KiB per CPU (buffer_size_kb)` : 'buffer size not recorded');
  if (f.cpus !== null) parts.push(`${f.cpus} CPU${f.cpus === 1 ? '' : 's'}`);
  if (f.stackMap === 'yes') parts.push(`stack map on${f.dumps !== null ? `, ${f.dumps} dumps` : ''}${f.resets !== null ? `, ${f.resets} resets` : ''}`);
  else if (f.stackMap === 'none') parts.push('no stack map (full stacks)');
  if (f.interrupted) parts.push('interrupted');
  if (f.set.length) parts.push(`set ${f.set.map((s) => `${s.file} = ${s.value} (was ${s.was})`).join(', ')}`);
  for (const w of f.warnings) parts.push(`warning: ${w}`);
  return parts.join('; ');
}
