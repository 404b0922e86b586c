import { frameKey } from './frames.ts';
import { LineSplitter, TOO_LONG } from './lines.ts';
import type { ChunkParser, ParseContext, TraceEvent, TraceSink, TraceStackRecord, TraceTextResult } from './types.ts';

/**
 * `perf script` output: samples with callchains (what `perf record -g` then `perf script` prints,
 * and what FlameGraph's stackcollapse-perf.pl reads).
 *
 *   COMM PID[/TID] [[CPU]] [SECONDS.FRAC:] [PERIOD] EVENT: [FIELDS]
 *   \t  IP SYM[+0xOFF] (DSO)          one callchain line per frame, leaf first
 *   (blank line)                       ends the sample
 *
 * COMM may hold blanks: the header is read as blank-separated tokens and the timestamp is the
 * first `DIGITS.DIGITS:` token; the one before it is `[CPU]` when bracketed, and the one before
 * that `PID[/TID]`. Without a timestamp (older perf, `perf script -F comm,pid,event,...`) the
 * first later token ending in `:` is the event, read backwards as in `parseUntimedHeader`; such
 * samples sit at 0 s, said once per file as a diagnostic. Each sample goes to the sink as an event (name EVENT, payload `period=N`
 * then any fields) followed, when it has callchain lines, by a full stack record (frames leaf
 * first), so it lands in the same stack table as a trace text `<stack trace>`.
 *
 * Frame keys: `frameKey(SYM)` (DESIGN 2.2: `sym+0xoff` when an offset is printed, else the bare
 * `sym`). A frame perf could not symbolize (`[unknown]`) is keyed as stackcollapse-perf names
 * it, a bracketed marker kept as it is: `[BASENAME-OF-DSO]` when the DSO is known, else
 * `[unknown]`; so the folded export of a perf capture is stackcollapse-perf's (without its
 * process-name root). Kernel and user frames are one stack, as perf prints them; the user
 * frames (a DSO that is not `[kernel.kallsyms]`, another `[...]` kernel module or `vmlinux`)
 * are counted in `userFrames`. A callchain line with `SYM` in parentheses (perf's process-name
 * marker) is used and not a frame, as in stackcollapse-perf.
 *
 * Older perf printed callchain lines without leading blanks: a line that is no header but is
 * `IP SYM (DSO)` is a frame of the open sample, as stackcollapse-perf reads it. A frame whose
 * symbol perf printed empty (`IP  (DSO)`, two blanks) is named one blank (`BLANK_SYMBOL`), as the
 * script names it, not after its DSO.
 *
 * Lines starting with `#` (`perf script --header`) and blank lines are used. A header that does
 * not parse, a callchain line outside a sample or one without an address are unused and
 * diagnosed (file, line, reason). Linear: every line is scanned a constant number of times,
 * no regex runs over it.
 */

export interface PerfScriptResult extends TraceTextResult {
  samples: number;
  /** samples whose header has no time (placed at 0 s) */
  untimed: number;
  /** the file ended inside a sample, no blank line after its last one (stackcollapse-perf.pl does not count that sample) */
  unterminated: boolean;
  /** samples with at least one callchain frame */
  stacks: number;
  kernelFrames: number;
  userFrames: number;
}

export const PERF_REASON = {
  header: 'not a perf script sample header (COMM PID[/TID] [CPU] SECONDS: [PERIOD] EVENT:)',
  orphan: 'callchain line outside a sample (no header line before it)',
  frame: 'not a perf script callchain line (IP SYM (DSO))',
  untimed: 'perf script printed no time (perf script -F without time, or an older perf): its samples are all placed at 0 s on the timeline, in file order',
} as const;

const isBlank = (c: number) => c === 32 || c === 9;
const isDigit = (c: number) => c >= 48 && c <= 57;
const isHex = (c: number) => isDigit(c) || (c >= 97 && c <= 102) || (c >= 65 && c <= 70);

/** `s[a, b)` is all digits (at least one). */
function digits(s: string, a: number, b: number): boolean {
  if (b <= a) return false;
  for (let i = a; i < b; i++) if (!isDigit(s.charCodeAt(i))) return false;
  return true;
}

/** `s[a, b)` is `DIGITS.DIGITS:` (reads only the token: a search past it would make a line of many tokens quadratic). */
function isTime(s: string, a: number, b: number): boolean {
  if (s.charCodeAt(b - 1) !== 58 /* : */) return false;
  let dot = a;
  while (dot < b && isDigit(s.charCodeAt(dot))) dot++;
  return dot > a && dot < b - 2 && s.charCodeAt(dot) === 46 /* . */ && digits(s, dot + 1, b - 1);
}

export interface PerfHeader {
  comm: string;
  pid: number;
  tgid: number | null;
  cpu: number | null;
  /** null when perf printed no time (`perf script -F comm,pid,event,...`, older perf) */
  ts: number | null;
  period: number | null;
  event: string;
  fields: string;
}

/**
 * Blank-separated tokens of a header are visited once each, left to right, keeping only the
 * bounds of the last three: no array per line. (A list of every token's bounds, 2 numbers a
 * token, cost 7-15x the time for the same bytes once a line held more than ~8k tokens: V8 puts
 * an array of more than 16k elements in its large-object space, one allocation per line.)
 * `headerStepsForTests` counts characters visited, for the tests' counted-work check.
 */
export const headerStepsForTests = { n: 0 };

/** A sample header line, or null when it is not one. */
export function parsePerfHeader(line: string): PerfHeader | null {
  const n = line.length;
  let i = 0;
  // bounds of the three tokens before the current one: 1 the previous, 2 the one before, 3 before that
  let a1 = -1;
  let b1 = -1;
  let b2 = -1;
  let a2 = -1;
  let b3 = -1;
  let first = -1;
  let k = 0;
  let ta = -1;
  let tb = -1;
  // without a timestamp: the first later token ending in `:` (the event) and the four tokens before it
  let ua = -1;
  let ub = -1;
  let uk = 0;
  const before = [-1, -1, -1, -1, -1, -1, -1, -1];
  let a3 = -1;
  while (i < n) {
    while (i < n && isBlank(line.charCodeAt(i))) i++;
    if (i >= n) break;
    const a = i;
    while (i < n && !isBlank(line.charCodeAt(i))) i++;
    if (k === 0) first = a;
    // the timestamp needs at least COMM and PID before it
    if (k >= 2 && isTime(line, a, i)) {
      ta = a;
      tb = i;
      break;
    }
    if (ua < 0 && k >= 2 && i - a >= 2 && line.charCodeAt(i - 1) === 58 /* : */ && !digits(line, a, i - 1)) {
      ua = a;
      ub = i;
      uk = k;
      before[0] = a1;
      before[1] = b1;
      before[2] = a2;
      before[3] = b2;
      before[4] = a3;
      before[5] = b3;
    }
    a3 = a2;
    b3 = b2;
    a2 = a1;
    b2 = b1;
    a1 = a;
    b1 = i;
    k++;
  }
  headerStepsForTests.n += i;
  if (ta < 0) return ua < 0 ? null : untimedHeader(line, first, ua, ub, uk, before);
  // token k - 1: [CPU] or PID[/TID]
  let pa = a1;
  let pb = b1;
  let commEnd = b2;
  let cpu: number | null = null;
  if (line.charCodeAt(a1) === 91 /* [ */ && line.charCodeAt(b1 - 1) === 93 /* ] */) {
    if (!digits(line, a1 + 1, b1 - 1) || k < 3) return null;
    cpu = Number(line.slice(a1 + 1, b1 - 1));
    pa = a2;
    pb = b2;
    commEnd = b3;
  }
  let slash = pa;
  while (slash < pb && line.charCodeAt(slash) !== 47 /* / */) slash++;
  let pid: number;
  let tgid: number | null = null;
  if (slash > pa && slash < pb) {
    if (!digits(line, pa, slash) || !digits(line, slash + 1, pb)) return null;
    tgid = Number(line.slice(pa, slash));
    pid = Number(line.slice(slash + 1, pb));
  } else {
    if (!digits(line, pa, pb)) return null;
    pid = Number(line.slice(pa, pb));
  }
  const comm = line.slice(first, commEnd);
  const tsText = line.slice(ta, tb - 1);
  // the tokens after the timestamp: [PERIOD] EVENT: [FIELDS]
  let ea = tb;
  while (ea < n && isBlank(line.charCodeAt(ea))) ea++;
  let eb = ea;
  while (eb < n && !isBlank(line.charCodeAt(eb))) eb++;
  let period: number | null = null;
  if (eb > ea && digits(line, ea, eb)) {
    period = Number(line.slice(ea, eb));
    ea = eb;
    while (ea < n && isBlank(line.charCodeAt(ea))) ea++;
    eb = ea;
    while (eb < n && !isBlank(line.charCodeAt(eb))) eb++;
  }
  if (eb === ea || line.charCodeAt(eb - 1) !== 58 || eb - ea < 2) return null;
  const event = line.slice(ea, eb - 1);
  let fa = eb;
  while (fa < n && isBlank(line.charCodeAt(fa))) fa++;
  let fb = n;
  while (fb > fa && isBlank(line.charCodeAt(fb - 1))) fb--;
  headerStepsForTests.n += fa - tb + (n - fb);
  const fields = line.slice(fa, fb);
  return { comm, pid, tgid, cpu, ts: Number(tsText), period, event, fields };
}

const isPidShaped = (s: string, a: number, b: number) => {
  let k = a;
  while (k < b && isDigit(s.charCodeAt(k))) k++;
  if (k === a) return false;
  if (k === b) return true;
  return s.charCodeAt(k) === 47 /* / */ && digits(s, k + 1, b);
};
const isCpuShaped = (s: string, a: number, b: number) => s.charCodeAt(a) === 91 && s.charCodeAt(b - 1) === 93 && digits(s, a + 1, b - 1);

/**
 * A header without a time: `COMM PID[/TID] [[CPU]] [PERIOD] EVENT: [FIELDS]` (what older perf
 * and `perf script -F comm,pid,event,ip,sym,dso` print; stackcollapse-perf.pl reads it as a
 * sample of weight 1). The event is the first token after COMM and PID that ends in `:`
 * (`ea, eb`, token number `k`); `t` holds the bounds of the three tokens before it, newest first,
 * read backwards as an optional PERIOD, an optional `[CPU]` and PID[/TID]; COMM ends before them.
 */
function untimedHeader(line: string, first: number, ea: number, eb: number, k: number, t: number[]): PerfHeader | null {
  const n = line.length;
  const tok = (j: number): [number, number] => [t[2 * j], t[2 * j + 1]];
  let at = 0;
  let period: number | null = null;
  let cpu: number | null = null;
  // PERIOD only when a PID (or [CPU] then a PID) stands before it, and a COMM before that
  {
    const [a, b] = tok(0);
    const [a1, b1] = tok(1);
    if (k >= 3 && digits(line, a, b) && (isPidShaped(line, a1, b1) || (k >= 4 && isCpuShaped(line, a1, b1)))) {
      period = Number(line.slice(a, b));
      at++;
    }
  }
  {
    const [a, b] = tok(at);
    if (at < 2 && k - at >= 3 && isCpuShaped(line, a, b)) {
      cpu = Number(line.slice(a + 1, b - 1));
      at++;
    }
  }
  if (at > 2) return null;
  const [pa, pb] = tok(at);
  if (k - at < 2 || !isPidShaped(line, pa, pb)) return null;
  let slash = pa;
  while (slash < pb && line.charCodeAt(slash) !== 47) slash++;
  const tgid = slash < pb ? Number(line.slice(pa, slash)) : null;
  const pid = slash < pb ? Number(line.slice(slash + 1, pb)) : Number(line.slice(pa, pb));
  // COMM: from the first token to the blank before PID
  let commEnd = pa;
  while (commEnd > first && isBlank(line.charCodeAt(commEnd - 1))) commEnd--;
  let fa = eb;
  while (fa < n && isBlank(line.charCodeAt(fa))) fa++;
  let fb = n;
  while (fb > fa && isBlank(line.charCodeAt(fb - 1))) fb--;
  headerStepsForTests.n += fa - eb + (n - fb) + (pa - commEnd);
  return { comm: line.slice(first, commEnd), pid, tgid, cpu, ts: null, period, event: line.slice(ea, eb - 1), fields: line.slice(fa, fb) };
}

export interface PerfFrame {
  ip: string;
  sym: string | null;
  dso: string | null;
}

/**
 * The symbol of a callchain line that printed an empty one (`7f1e2215d058  (/lib/libc-2.15.so)`,
 * older perf): one blank, the name stackcollapse-perf.pl reads there (its `\s*(.+) \(` leaves
 * the last blank before ` (` to `.+`), so the folded exports print what the script prints. It is
 * also the frame's key: no other key is a blank (frameKey trims).
 */
export const BLANK_SYMBOL = ' ';

/** A callchain line (`IP [SYM] [(DSO)]` after its leading blanks, if any), or null. */
export function parsePerfFrame(line: string): PerfFrame | null {
  let a = 0;
  let b = line.length;
  while (a < b && isBlank(line.charCodeAt(a))) a++;
  while (b > a && isBlank(line.charCodeAt(b - 1))) b--;
  let i = a;
  while (i < b && isHex(line.charCodeAt(i))) i++;
  if (i === a || (i < b && !isBlank(line.charCodeAt(i)))) return null;
  const ip = line.slice(a, i);
  const ipEnd = i;
  while (i < b && isBlank(line.charCodeAt(i))) i++;
  if (i === b) return { ip, sym: null, dso: null };
  let dso: string | null = null;
  let symEnd = b;
  if (line.charCodeAt(b - 1) === 41 /* ) */) {
    // the last ` (` before the closing parenthesis, as stackcollapse-perf's greedy `(.+) \((.*)\)`
    const open = line.lastIndexOf(' (', b - 2);
    if (open >= i) {
      dso = line.slice(open + 2, b - 1);
      symEnd = open;
      while (symEnd > i && isBlank(line.charCodeAt(symEnd - 1))) symEnd--;
    } else if (line.charCodeAt(i) === 40 /* ( */) {
      // `IP  (DSO)`, two blanks or more: older perf printing an empty symbol name between them;
      // stackcollapse-perf's `\s*(.+) \(` takes the blank before ` (` as the name (BLANK_SYMBOL)
      if (i - ipEnd >= 2) return { ip, sym: BLANK_SYMBOL, dso: line.slice(i + 1, b - 1) };
      // `IP (DSO)`: no symbol printed
      return { ip, sym: null, dso: line.slice(i + 1, b - 1) };
    }
  }
  return { ip, sym: symEnd > i ? line.slice(i, symEnd) : null, dso };
}

/** A callchain line as the sniffer sees one: `IP SYM (DSO)` or `IP (DSO)`, after leading blanks or (older perf) none. */
export function isPerfFrameLine(line: string): boolean {
  const f = parsePerfFrame(line);
  return f !== null && f.dso !== null;
}

/** Whether a DSO is the kernel's: `[kernel.kallsyms]`, another bracketed module, or a `vmlinux`. */
export function isKernelDso(dso: string | null): boolean {
  if (dso === null) return false;
  if (dso.charCodeAt(0) === 91 /* [ */) return dso !== '[unknown]';
  return dso.endsWith('vmlinux');
}

/** The frame key of a callchain frame (see the file comment). */
export function perfFrameKey(f: PerfFrame): string {
  if (f.sym === BLANK_SYMBOL) return BLANK_SYMBOL;
  if (f.sym !== null && f.sym !== '[unknown]') return frameKey(f.sym);
  if (f.dso !== null && f.dso !== '[unknown]') {
    const base = f.dso.slice(f.dso.lastIndexOf('/') + 1);
    if (base.length > 0) return '[' + base + ']';
  }
  if (f.sym === null) return frameKey(f.ip.startsWith('0x') ? f.ip : '0x' + f.ip);
  return '[unknown]';
}

export function createPerfScriptParser(ctx: ParseContext, sink: TraceSink): ChunkParser<PerfScriptResult> {
  const diag = ctx.diagnostics;
  let used = 0;
  let unused = 0;
  let samples = 0;
  let stacks = 0;
  let kernelFrames = 0;
  let userFrames = 0;
  let cpus = -1;
  let untimed = 0;
  /** the open sample (its header was read), null between samples */
  let open: PerfHeader | null = null;
  let openLine = 0;
  let frames: string[] = [];

  const close = () => {
    if (!open) return;
    if (frames.length > 0) {
      const r: TraceStackRecord = {
        lineNo: openLine,
        kind: 'full',
        comm: open.comm,
        pid: open.pid,
        cpu: open.cpu ?? 0,
        ts: open.ts ?? 0,
        slot: -1,
        generation: null,
        frames,
      };
      sink.stackRecord(r);
      stacks++;
    }
    open = null;
    frames = [];
  };

  const frame = (f: PerfFrame) => {
    used++;
    if (f.sym !== null && f.sym.charCodeAt(0) === 40 /* ( */) return; // a process name, not a frame
    frames.push(perfFrameKey(f));
    if (isKernelDso(f.dso)) kernelFrames++;
    else userFrames++;
  };

  const onLine = (line: string, lineNo: number) => {
    const c0 = line.charCodeAt(0);
    if (line.length === 0 || line.trim().length === 0) {
      close();
      used++;
      return;
    }
    if (c0 === 35 /* # */) {
      used++;
      return;
    }
    if (isBlank(c0)) {
      if (!open) {
        unused++;
        diag.atLine(lineNo, PERF_REASON.orphan);
        return;
      }
      const f = parsePerfFrame(line);
      if (!f) {
        unused++;
        diag.atLine(lineNo, PERF_REASON.frame);
        return;
      }
      frame(f);
      return;
    }
    const h = parsePerfHeader(line);
    if (!h) {
      // older perf printed callchain lines without leading blanks (`ffffffff8103d0ca
      // native_write_msr_safe ([kernel.kallsyms])`): stackcollapse-perf reads a line that is no
      // header as a frame when it is `IP SYM (DSO)`, indented or not
      const f = parsePerfFrame(line);
      if (f && f.dso !== null) {
        if (open) frame(f);
        else {
          unused++;
          diag.atLine(lineNo, PERF_REASON.orphan);
        }
        return;
      }
    }
    if (!h) {
      // a line that is no header also ends the sample before it: its frames are not guessed into the next
      close();
      unused++;
      diag.atLine(lineNo, PERF_REASON.header);
      return;
    }
    close();
    used++;
    samples++;
    if (h.ts === null && untimed++ === 0) diag.atLine(lineNo, PERF_REASON.untimed);
    if (h.cpu !== null && h.cpu > cpus) cpus = h.cpu;
    open = h;
    openLine = lineNo;
    const e: TraceEvent = {
      lineNo,
      comm: h.comm,
      pid: h.pid,
      tgid: h.tgid,
      cpu: h.cpu ?? 0,
      ts: h.ts ?? 0,
      flags: '',
      name: h.event,
      payload: (h.period !== null ? `period=${h.period}` : '') + (h.period !== null && h.fields ? ' ' : '') + h.fields,
      ...(h.period !== null ? { weight: h.period } : {}),
    };
    sink.event(e);
  };

  const splitter = new LineSplitter(onLine, undefined, (lineNo) => {
    unused++;
    diag.atLine(lineNo, TOO_LONG);
  });
  return {
    push: (chunk) => splitter.push(chunk),
    end: (): PerfScriptResult => {
      const total = splitter.end();
      const unterminated = open !== null;
      close();
      return {
        lines: { total, used, unused },
        tracer: null,
        cpus: cpus >= 0 ? cpus + 1 : null,
        samples,
        untimed,
        unterminated,
        stacks,
        kernelFrames,
        userFrames,
      };
    },
  };
}
