/**
 * The trace text reader's state and its text path (trace-text.ts says what is read and how): a
 * decoded line classified by its first character (`line`), an event line read in place without a
 * regex where it is common (`range`, `fastEvent`) and by event-line.ts's scanners otherwise, its
 * payload (`payload`: cookies, stacks, named events, print events joined over continuation
 * lines), full and user stacks' frames. The byte path (trace-text-bytes.ts) extends it and reads
 * the common lines from their bytes into the same state.
 */
import { contextOf } from './types.ts';
import { matchEventLine, matchLatencyLine, printkName, PRINTK_BPRINT, PRINTK_NONE, isResetMarker } from './event-line.ts';
import { frameKey, noteFrameModule, simpleFrameKeyEnd } from './frames.ts';
import { WordKeys } from './trace-bytes.ts';
import * as shared from './trace-text-shared.ts';
import type { ColumnSink, InternTable, LineHead, PrintName } from './trace-text-shared.ts';
import type { ParseContext, TraceEvent, TraceSink, TraceStackRecord } from './types.ts';

// what the hot paths use, bound here once: an imported binding is a cell load and a hole check at
// each use in optimized code, and an imported function is not inlined (parser-noop 10% slower)
const {
  C_C,
  C_c,
  C_COLON,
  C_DASH,
  C_DOT,
  C_EQ,
  C_GT,
  C_HASH,
  C_LBRACKET,
  C_LPAREN,
  C_LT,
  C_RBRACKET,
  C_RPAREN,
  C_SPACE,
  C_TAB,
  C_v,
  columnSink,
  FAST_DONE,
  FAST_NO,
  FAST_UNSURE,
  isBlank,
  MAX_I32,
  MAX_ID,
  MAX_PRINT,
  MAX_TS_NS_SECONDS,
  maybeSpace,
  POW10,
  REASON,
} = shared;

/** A number as a diagnostic names it: exact when it is, else its magnitude. */
const shown = (v: number): string => (Number.isSafeInteger(v) ? String(v) : `~${v.toPrecision(4)}`);

// `COMM-PID [(TGID)] [CPU] [FLAGS] SECONDS.FRACTION: PAYLOAD` and the latency format
// (`      ps-6143    2d..1  259us+: payload`) are scanned by event-line.ts in linear time.

/** An event object to reuse: the parser fills it for each line it sends. */
const emptyEvent = (): TraceEvent => ({ lineNo: 0, comm: '', pid: 0, tgid: null, cpu: 0, ts: 0, flags: '', name: '', payload: '' });
const STACK_ID_RE = /^<stack_id (\d+)(?: gen (\d+))?>\s*$/;
const LOST_RE = /^CPU:(\d+) \[(?:LOST (?:(\d+) )?EVENTS|(\d+) EVENTS DROPPED)\]/;
const CPU_EMPTY_RE = /^CPU \d+ is empty\s*$/;
const CPUS_RE = /^cpus=(\d+)\s*$/;
const VERSION_RE = /^version = \d+\s*$/;
const TRACE_CMD_STACK_RE = /^<stack trace ?>\s*$/;
const USER_HEX_RE = /^<([0-9a-fA-F]+)>$/;
/** Column legends and latency-tracer banners, besides the named headers. */
const HEADER_WORDS = /\||=>|TASK-PID|CPU#|TIMESTAMP|DURATION|latency trace|^#\s*-{3,}|^#\s*$/;

/** The reader's state and its text path; TraceTextBytes (trace-text-bytes.ts) is the class a parser makes. */
export class TraceTextReader {
  used = 0;
  unused = 0;
  tracer: string | null = null;
  cpus: number | null = null;
  /** the most digits after the point any event time had (6: microseconds, 9: nanoseconds) */
  timeDigits = 0;
  /** full or user stack whose frame lines are being read */
  protected open: TraceStackRecord | null = null;
  /** reused for every event and every cookie (the sink copies what it keeps) */
  private readonly ev: TraceEvent = emptyEvent();
  private readonly cookie: TraceStackRecord = {
    lineNo: 0,
    kind: 'cookie',
    comm: '',
    pid: 0,
    cpu: 0,
    ts: 0,
    slot: -1,
    generation: null,
    frames: null,
  };
  /** the last event line was a bprint or print event, with only its continuation and blank lines since */
  private printOpen = false;
  /** ... and it waits in `printEv` for its continuation lines (a sink without ids) */
  private printPending = false;
  private readonly printEv: TraceEvent = emptyEvent();
  /** the open print event's payload length so far (with a sink of ids too, so both join the same lines) */
  private printChars = 0;
  /** blank lines read since its last line: they join it only with a continuation line after them */
  private printBlanks = 0;
  /** the ids of `bprint`, `print` and `bputs` in the sink's name table */
  private readonly printIds: Record<PrintName, number> = { bprint: -1, print: -1, bputs: -1 };
  /** comm last read for a pid (saves slicing the same comm again) */
  private commOfPid = new Map<number, string>();
  /** recently seen event names and flags, to reuse their strings */
  private readonly names: string[] = [];
  private readonly flagsSeen: string[] = [];
  /** the index after a fast-path number (see digitsAt) */
  protected numEnd = 0;
  /** the sink's id entry points, when it has them */
  protected readonly fast: ColumnSink | null;
  /** the frame ids of the open full stack, when the sink takes them (`frameCount` of them) */
  protected readonly frameTable: InternTable | null;
  protected frameIds = new Int32Array(64);
  /** the open full stack's task, when the byte path took it (-1: flush interns its COMM) */
  protected openTask = -1;
  protected frameCount = 0;
  /** the task id last seen for a pid (slot pid & 1023), and the event name id last seen for a name length: checked against the text before use */
  protected readonly taskPid = new Int32Array(1024).fill(-1);
  protected readonly taskId = new Int32Array(1024);
  protected readonly nameId = new Int32Array(64).fill(-1);
  /** the bytes of those tasks' and names' strings, for the byte path (WordKeys) */
  protected readonly taskKeys = new WordKeys(1024);
  protected readonly nameKeys = new WordKeys(64);
  /** the head of the event line being read (setLine), what payload, emit and the rest take from it */
  protected readonly head: LineHead = { lineNo: 0, pid: 0, tgid: null, cpu: 0, ts: 0 };
  /** the COMM and FLAGS of the line being read: text[from, to) (flags: from === to for none) */
  private commText = '';
  private commFrom = 0;
  private commTo = 0;
  private flagsText = '';
  private flagsFrom = 0;
  private flagsTo = 0;

  constructor(
    protected readonly ctx: ParseContext,
    private readonly sink: TraceSink,
  ) {
    this.fast = columnSink(sink);
    this.frameTable = this.fast?.frames && this.fast.fullIds ? this.fast.frames : null;
  }

  /** whether lines are read from their bytes (`bytes`): only into a sink of ids */
  get readsBytes(): boolean {
    return this.fast !== null;
  }

  /** The head of the event line being read, before its payload. */
  protected setLine(lineNo: number, pid: number, tgid: number | null, cpu: number, ts: number): void {
    const h = this.head;
    h.lineNo = lineNo;
    h.pid = pid;
    h.tgid = tgid;
    h.cpu = cpu;
    h.ts = ts;
  }

  private setHead(commText: string, commFrom: number, commTo: number, flagsText: string, flagsFrom: number, flagsTo: number): void {
    this.commText = commText;
    this.commFrom = commFrom;
    this.commTo = commTo;
    this.flagsText = flagsText;
    this.flagsFrom = flagsFrom;
    this.flagsTo = flagsTo;
  }

  /** The COMM of the line being read as a string (the last one of its pid when it is the same). */
  private comm(pid: number): string {
    const t = this.commText;
    if (this.commFrom === 0 && this.commTo === t.length) return t;
    return this.commAt(t, this.commFrom, this.commTo, pid);
  }

  /** the line's context from its flags (types.ts contextOf) */
  private lineCtx(): number {
    return contextOf(this.flagsText, this.flagsFrom, this.flagsTo);
  }

  private flags(): string {
    const t = this.flagsText;
    if (this.flagsFrom === this.flagsTo) return '';
    if (this.flagsFrom === 0 && this.flagsTo === t.length) return t;
    return this.flagsAt(t, this.flagsFrom, this.flagsTo);
  }

  flush(): void {
    if (this.open) {
      const r = this.open;
      this.open = null;
      const fast = this.fast;
      if (r.kind === 'full' && this.frameTable && fast) {
        fast.fullIds!(
          r.ts,
          r.cpu,
          r.pid,
          this.openTask >= 0 ? this.openTask : fast.tasks.intern(r.comm),
          this.frameIds,
          this.frameCount,
          r.lineNo,
          r.ctx ?? -1,
        );
        this.frameCount = 0;
        return;
      }
      this.sink.stackRecord(r);
    }
  }

  /** Ends the open print event: to the sink if it waits for its continuation lines. */
  flushPrint(): void {
    if (!this.printOpen) return;
    this.printOpen = false;
    this.printBlanks = 0;
    if (this.printPending) {
      this.printPending = false;
      this.sink.event(this.printEv);
    }
  }

  /** A line that is no trace line: joins the open print event's message, or false. */
  private continuation(line: string): boolean {
    if (!this.printOpen) return false;
    const add = this.printBlanks + 1 + line.length;
    if (this.printChars + add > MAX_PRINT) return false;
    this.printChars += add;
    if (this.printPending) this.printEv.payload += (this.printBlanks > 0 ? '\n'.repeat(this.printBlanks + 1) : '\n') + line;
    this.printBlanks = 0;
    this.used++;
    return true;
  }

  private bad(lineNo: number, reason: string): void {
    this.unused++;
    this.ctx.diagnostics.atLine(lineNo, reason);
  }

  /** A line LineSplitter did not hand over: too long to be a trace line. */
  tooLong(lineNo: number): void {
    this.flushPrint();
    this.bad(lineNo, REASON.tooLong);
  }

  /**
   * A line read in place (`text` from `start` to `end`, see LineSplitter): true if it was a
   * common event or cookie line and is done; false leaves it to `line`.
   */
  range(text: string, start: number, end: number, lineNo: number, clean: boolean): boolean {
    if (!clean) return false;
    let i = start;
    let c = 0;
    while (i < end && ((c = text.charCodeAt(i)) === C_SPACE || c === C_TAB)) i++;
    // a frame line of a full stack the sink takes as ids, read in place (as `line` would: no flush)
    if (c === C_EQ && i < end && text.charCodeAt(i + 1) === C_GT && this.open !== null && this.frameTable !== null && this.open.kind === 'full') {
      this.flushPrint();
      this.frame(text, i + 2, end, lineNo);
      return true;
    }
    if (i === end || c <= C_SPACE || c >= 0x7f || c === C_EQ || c === C_HASH) return false;
    if (i === start && (c === C_C || c === C_c || c === C_v)) return false;
    // not blank and not a frame: `line` would flush here as well
    this.flush();
    return this.fastEvent(text, i, end, lineNo, true);
  }

  line(line: string, lineNo: number): void {
    const n = line.length;
    let i = 0;
    let c = 0;
    while (i < n && ((c = line.charCodeAt(i)) === C_SPACE || c === C_TAB)) i++;
    if (i === n) {
      this.flush();
      if (this.printOpen) this.printBlanks++;
      this.used++;
      return;
    }
    if (c === C_EQ && line.charCodeAt(i + 1) === C_GT) {
      this.flushPrint();
      this.frame(line, i + 2, n, lineNo);
      return;
    }
    this.flush();
    if (c === C_HASH && i === 0) {
      this.flushPrint();
      this.header(line, lineNo);
      return;
    }
    if (i === 0) {
      if (c === C_C && line.startsWith('CPU', 0)) {
        const m = LOST_RE.exec(line);
        if (m) {
          this.flushPrint();
          const count = m[2] ?? m[3];
          let cpu = +m[1];
          let n = count === undefined ? null : +count;
          if (cpu > MAX_I32) {
            this.ctx.diagnostics.atLine(lineNo, `lost-events marker's CPU ${shown(cpu)} beyond 2^31 - 1: kept on CPU -1`);
            cpu = -1;
          }
          if (n !== null && !Number.isSafeInteger(n)) {
            this.ctx.diagnostics.atLine(lineNo, `lost-events count ${count} beyond 2^53 (not exact as a number): the marker is kept, its count unknown`);
            n = null;
          }
          this.sink.lost({ lineNo, cpu, count: n });
          this.used++;
          return;
        }
        if (CPU_EMPTY_RE.test(line)) {
          this.flushPrint();
          this.used++;
          return;
        }
      } else if (c === C_c) {
        const m = CPUS_RE.exec(line);
        if (m) {
          this.flushPrint();
          this.cpus = +m[1];
          this.used++;
          return;
        }
      } else if (c === C_v && VERSION_RE.test(line)) {
        this.flushPrint();
        this.used++;
        return;
      }
    }
    if (this.fastEvent(line, i, n, lineNo, false)) return;
    let m = matchEventLine(line);
    if (m) {
      const t = m.tgid;
      const tgid = t === null || t.charCodeAt(0) === 45 /* - */ ? null : +t;
      this.setHead(m.comm, 0, m.comm.length, m.flags, 0, m.flags.length);
      this.noteDigits(m.time);
      this.setLine(lineNo, m.pid, tgid, m.cpu, parseFloat(m.time));
      this.payload(line, m.payload, n);
      return;
    }
    m = matchLatencyLine(line);
    if (m) {
      this.setHead(m.comm, 0, m.comm.length, m.flags, 0, m.flags.length);
      this.setLine(lineNo, m.pid, null, m.cpu, parseFloat(m.time) / 1e6);
      this.payload(line, m.payload, n);
      return;
    }
    if (this.continuation(line)) return;
    this.flushPrint();
    this.bad(lineNo, REASON.notTrace);
  }

  /** A frame line: `line[from, end)` follows its `=>`. */
  private frame(line: string, from: number, end: number, lineNo: number): void {
    const r = this.open;
    if (!r) {
      this.bad(lineNo, REASON.orphanFrame);
      return;
    }
    if (r.kind === 'full' && this.frameTable) {
      this.frameId(line, from, end, this.frameTable);
      this.used++;
      return;
    }
    const printed = line.slice(from, end).trim();
    if (r.kind === 'full') noteFrameModule(printed, 0, printed.length, this.ctx.modules);
    let key: string;
    const u = r.kind === 'user' && printed.charCodeAt(0) === C_LT ? USER_HEX_RE.exec(printed) : null;
    if (u) key = '0x' + u[1].toLowerCase().replace(/^0+(?=.)/, '');
    else key = frameKey(printed);
    r.frames!.push(key);
    this.used++;
  }

  /** The frame key of `line` from `from` on, interned in `table` (from the range when it is the common form), added to the open stack's ids. */
  private frameId(line: string, from: number, end: number, table: InternTable): void {
    let a = from;
    let b = end;
    let c = 0;
    while (a < b && ((c = line.charCodeAt(a)) === C_SPACE || c === C_TAB)) a++;
    while (b > a && ((c = line.charCodeAt(b - 1)) === C_SPACE || c === C_TAB)) b--;
    const keyEnd = simpleFrameKeyEnd(line, a, b);
    if (line.charCodeAt(b - 1) === 93 /* ] */) noteFrameModule(line, a, b, this.ctx.modules);
    const id = keyEnd >= 0 ? table.internRange(line, a, keyEnd) : table.intern(frameKey(line.slice(from, end).trim()));
    if (this.frameCount === this.frameIds.length) {
      const next = new Int32Array(this.frameIds.length * 2);
      next.set(this.frameIds);
      this.frameIds = next;
    }
    this.frameIds[this.frameCount++] = id;
  }

  private header(line: string, lineNo: number): void {
    if (line.startsWith('# tracer:')) {
      this.tracer = line.slice(9).trim();
      this.used++;
      return;
    }
    const p = line.indexOf('#P:');
    if (p >= 0) {
      const v = parseInt(line.slice(p + 3), 10);
      if (v === v) this.cpus = v;
      this.used++;
      return;
    }
    // `##### CPU N buffer started ####`, `#` alone, legends, latency banners; never a quoted
    // shell prompt `# ./tool ... | ...`
    const known = line.charCodeAt(1) === C_HASH || HEADER_WORDS.test(line) || line.includes('entries-in-buffer');
    if (known && !line.startsWith('# ./')) {
      this.used++;
      return;
    }
    // e.g. a shell prompt `# ./kprobe ...` quoted in a document
    this.bad(lineNo, REASON.notHeader);
  }

  /**
   * The common event line without EVENT_RE, giving exactly what EVENT_RE would. The line is
   * `line` up to `end` (exclusive); `from` is its first character that is not a space or tab.
   * `clean`: the line is known to hold no CR, U+2028 or U+2029. Returns false (nothing done)
   * for anything it is not sure about; the regexes then decide.
   */
  private fastEvent(line: string, from: number, end: number, lineNo: number, clean: boolean): boolean {
    // `\s` and `.` of the regex: leave other white space and line terminators to it
    const c0 = line.charCodeAt(from);
    if (c0 <= C_SPACE || c0 >= 0x7f) return false;
    if (!clean && (line.indexOf('\r') >= 0 || line.indexOf('\u2028') >= 0 || line.indexOf('\u2029') >= 0)) return false;
    // the lazy COMM: the first `-` whose rest of the line matches
    let d = line.indexOf('-', from);
    while (d >= 0 && d < end) {
      const r = this.fastRest(line, from, d, end, lineNo);
      if (r === FAST_DONE) return true;
      if (r === FAST_UNSURE) return false;
      d = line.indexOf('-', d + 1);
    }
    // no `-` can start the PID column: let the regexes say so (latency format, or not a trace)
    return false;
  }

  /** Reads digits at `i` as a number (NaN without one); `numEnd` is set after them. */
  private digitsAt(line: string, i: number): number {
    const v = this.accumulate(line, i, 0);
    const end = this.numEnd;
    if (end === i) return NaN;
    // beyond 15 digits the sum above may round differently from `+digits`
    return end - i > 15 ? +line.slice(i, end) : v;
  }

  /** v * 10^k + the k digits at `i` (as an integer); `numEnd` is set after them. */
  private accumulate(line: string, i: number, v: number): number {
    let c = 0;
    while ((c = line.charCodeAt(i) - 48) >= 0 && c <= 9) {
      v = v * 10 + c;
      i++;
    }
    this.numEnd = i;
    return v;
  }

  private fastRest(line: string, from: number, d: number, n: number, lineNo: number): number {
    // -PID\s+
    const pid = this.digitsAt(line, d + 1);
    if (pid !== pid) return FAST_NO;
    let i = this.numEnd;
    let k = skipBlanks(line, i);
    if (k === i) return maybeSpace(line.charCodeAt(i)) ? FAST_UNSURE : FAST_NO;
    i = k;
    let c = line.charCodeAt(i);
    if (maybeSpace(c)) return FAST_UNSURE;
    // (TGID)\s+
    let tgid: number | null = null;
    if (c === C_LPAREN) {
      i = skipBlanks(line, i + 1);
      c = line.charCodeAt(i);
      if (c === C_DASH) {
        while (line.charCodeAt(i) === C_DASH) i++;
      } else {
        tgid = this.digitsAt(line, i);
        if (tgid !== tgid) return maybeSpace(c) ? FAST_UNSURE : FAST_NO;
        i = this.numEnd;
      }
      c = line.charCodeAt(i);
      if (c !== C_RPAREN) return maybeSpace(c) ? FAST_UNSURE : FAST_NO;
      k = skipBlanks(line, i + 1);
      if (k === i + 1) return maybeSpace(line.charCodeAt(k)) ? FAST_UNSURE : FAST_NO;
      i = k;
      c = line.charCodeAt(i);
    }
    // [CPU]\s+
    if (c !== C_LBRACKET) return maybeSpace(c) ? FAST_UNSURE : FAST_NO;
    const cpu = this.digitsAt(line, i + 1);
    if (cpu !== cpu) return FAST_NO;
    i = this.numEnd;
    if (line.charCodeAt(i) !== C_RBRACKET) return FAST_NO;
    i++;
    k = skipBlanks(line, i);
    if (k === i) return maybeSpace(line.charCodeAt(i)) ? FAST_UNSURE : FAST_NO;
    i = k;
    // from here on, anything unusual is left to the regex
    // a token of 4-5 printable characters then blanks is FLAGS; else the token is the time
    const tok = i;
    let t = i;
    while (t < n && (c = line.charCodeAt(t)) > C_SPACE && c < 0x7f) t++;
    /** FLAGS are [tok, flagsTo), none when flagsTo === tok */
    let flagsTo = tok;
    let ts0 = i;
    if (t < n && c !== C_SPACE && c !== C_TAB) return FAST_UNSURE;
    const len = t - i;
    if (len === 4 || len === 5) {
      if (t === n) return FAST_UNSURE;
      flagsTo = t;
      ts0 = skipBlanks(line, t);
      if (maybeSpace(line.charCodeAt(ts0))) return FAST_UNSURE;
    }
    // SECONDS.FRACTION:(\s+|$)
    const ts = this.timeAt(line, ts0);
    if (ts !== ts) return FAST_UNSURE;
    i = this.numEnd;
    if (line.charCodeAt(i) !== C_COLON) return FAST_UNSURE;
    i++;
    const ps = skipBlanks(line, i);
    if (ps === i && i !== n) return FAST_UNSURE;
    if (ps < n && maybeSpace(line.charCodeAt(ps))) return FAST_UNSURE;
    // the time token must end at the colon when there were no flags (else it was not a time)
    if (flagsTo === tok && i !== t) return FAST_UNSURE;
    this.setHead(line, from, d, line, tok, flagsTo);
    this.setLine(lineNo, pid, tgid, cpu, ts);
    this.payload(line, ps, n);
    return FAST_DONE;
  }

  private noteDigits(time: string): void {
    const dot = time.indexOf('.');
    const frac = dot < 0 ? 0 : time.length - dot - 1;
    if (frac > this.timeDigits) this.timeDigits = frac;
  }

  /** `\d+\.\d+` at `start` as parseFloat reads it (NaN if not there); `numEnd` is set after it. */
  private timeAt(line: string, start: number): number {
    const whole = this.accumulate(line, start, 0);
    const dot = this.numEnd;
    if (dot === start || line.charCodeAt(dot) !== C_DOT) return NaN;
    const v = this.accumulate(line, dot + 1, whole);
    const i = this.numEnd;
    if (i === dot + 1) return NaN;
    const frac = i - dot - 1;
    if (frac > this.timeDigits) this.timeDigits = frac;
    // exact integer over an exact power of ten: one correctly rounded division, as parseFloat
    if (i - start - 1 <= 15 && frac <= 22) return v / POW10[frac];
    return parseFloat(line.slice(start, i));
  }

  private commAt(line: string, from: number, to: number, pid: number): string {
    const len = to - from;
    const known = this.commOfPid.get(pid);
    if (known !== undefined && known.length === len && line.startsWith(known, from)) return known;
    const comm = line.slice(from, to);
    if (this.commOfPid.size >= 4096) this.commOfPid = new Map();
    this.commOfPid.set(pid, comm);
    return comm;
  }

  private flagsAt(line: string, from: number, to: number): string {
    return recent(this.flagsSeen, line, from, to);
  }

  private nameAt(line: string, from: number, to: number): string {
    return recent(this.names, line, from, to);
  }

  /**
   * An event line: its name is `nameText[nameFrom, nameTo)`, its payload `line[p0, p1)` (made a
   * string only for a sink without ids). The line's head is `head`, its COMM and FLAGS those
   * setHead was given.
   */
  private emit(nameText: string, nameFrom: number, nameTo: number, line: string, p0: number, p1: number): void {
    const fast = this.fast;
    const h = this.head;
    if (fast) {
      fast.eventIds(h.ts, h.cpu, h.pid, this.task(fast, h.pid), this.name(fast, nameText, nameFrom, nameTo), this.lineCtx());
      fast.eventMore?.(h.tgid ?? -1, line, p0, p1);
      return;
    }
    const name = nameFrom === 0 && nameTo === nameText.length ? nameText : this.nameAt(nameText, nameFrom, nameTo);
    this.sink.event(this.fill(this.ev, name, line.slice(p0, p1)));
  }

  /** `e` (a reused event object) with the line's head and the COMM and FLAGS setHead was given. */
  private fill(e: TraceEvent, name: string, payload: string): TraceEvent {
    const h = this.head;
    e.lineNo = h.lineNo;
    e.comm = this.comm(h.pid);
    e.pid = h.pid;
    e.tgid = h.tgid;
    e.cpu = h.cpu;
    e.ts = h.ts;
    e.flags = this.flags();
    e.name = name;
    e.payload = payload;
    return e;
  }

  /** The id of the line's COMM: the one last seen for its pid when the text is the same, else interned. */
  private task(fast: ColumnSink, pid: number): number {
    const t = this.commText;
    const from = this.commFrom;
    const len = this.commTo - from;
    const k = pid & 1023;
    if (this.taskPid[k] === pid) {
      const id = this.taskId[k];
      const s = fast.tasks.strings[id];
      if (s !== undefined && s.length === len && t.startsWith(s, from)) return id;
    }
    const id = fast.tasks.internRange(t, from, from + len);
    this.taskPid[k] = pid;
    this.taskId[k] = id;
    this.taskKeys.forget(k);
    return id;
  }

  /** The id of the event name `text[from, to)`: the one last seen of its length when the text is the same, else interned. */
  protected name(fast: ColumnSink, text: string, from: number, to: number): number {
    const k = (to - from) & 63;
    const last = this.nameId[k];
    if (last >= 0) {
      const s = fast.names.strings[last];
      if (s !== undefined && s.length === to - from && text.startsWith(s, from)) return last;
    }
    const id = fast.names.internRange(text, from, to);
    this.nameId[k] = id;
    this.nameKeys.forget(k);
    return id;
  }

  /** A cookie: to `cookieIds` with the COMM as an id, or as the reused record. */
  private emitCookie(slot: number, generation: number | null): void {
    const fast = this.fast;
    const h = this.head;
    if (fast) {
      fast.cookieIds(h.ts, h.cpu, h.pid, this.task(fast, h.pid), slot, generation ?? -1, this.lineCtx());
      return;
    }
    const r = this.cookie;
    r.ctx = this.lineCtx();
    r.lineNo = h.lineNo;
    r.comm = this.comm(h.pid);
    r.pid = h.pid;
    r.cpu = h.cpu;
    r.ts = h.ts;
    r.slot = slot;
    r.generation = generation;
    this.sink.stackRecord(r);
  }

  /** `<stack_id N[ gen G]>` then blanks, as STACK_ID_RE; false if it is not exactly that. */
  private fastCookie(line: string, ps: number, n: number): boolean {
    let i = ps + 9;
    if (line.charCodeAt(i) !== C_SPACE) return false;
    const slot = this.digitsAt(line, i + 1);
    if (slot !== slot) return false;
    i = this.numEnd;
    let generation: number | null = null;
    if (line.startsWith(' gen ', i)) {
      generation = this.digitsAt(line, i + 5);
      if (generation !== generation) return false;
      i = this.numEnd;
    }
    if (line.charCodeAt(i) !== C_GT) return false;
    i = skipBlanks(line, i + 1);
    if (i !== n) return false;
    // a slot or generation beyond 32 bits: the regex path reports it
    if (slot > MAX_ID || (generation !== null && generation > MAX_ID)) return false;
    this.used++;
    this.emitCookie(slot, generation);
    return true;
  }

  /** The payload is `line` from `ps` up to `n` (the end of the line); the head is `head`'s, the COMM and FLAGS setHead's. */
  private payload(line: string, ps: number, n: number): void {
    this.flushPrint();
    const h = this.head;
    const lineNo = h.lineNo;
    if (h.pid > MAX_I32 || h.cpu > MAX_I32 || (h.tgid !== null && h.tgid > MAX_I32) || h.ts >= MAX_TS_NS_SECONDS) {
      // a value no column holds: said, the line kept (never wrapped into another pid or CPU)
      const d = this.ctx.diagnostics;
      if (h.pid > MAX_I32) (d.atLine(lineNo, `pid ${shown(h.pid)} beyond 2^31 - 1 (the kernel's pid_t): the event is kept with pid -1`), (h.pid = -1));
      if (h.tgid !== null && h.tgid > MAX_I32) (d.atLine(lineNo, `TGID ${shown(h.tgid)} beyond 2^31 - 1: the event is kept without one`), (h.tgid = null));
      if (h.cpu > MAX_I32) (d.atLine(lineNo, `CPU ${shown(h.cpu)} beyond 2^31 - 1: the event is kept on CPU -1`), (h.cpu = -1));
      if (h.ts >= MAX_TS_NS_SECONDS) d.atLine(lineNo, `time ${shown(h.ts)} s beyond 2^63 - 1 ns: its ts_ns is null in the tables`);
    }
    const c0 = line.charCodeAt(ps);
    if (c0 === C_LT) {
      if (line.startsWith('<stack_id', ps)) {
        if (this.fastCookie(line, ps, n)) return;
        const m = STACK_ID_RE.exec(line.slice(ps, n));
        const slot = m ? +m[1] : NaN;
        const generation = m && m[2] !== undefined ? +m[2] : null;
        if (!m) {
          this.bad(lineNo, REASON.badStackId);
          return;
        }
        // the kernel's ids are u32: a larger one would wrap in the columns and name another slot
        if (slot > MAX_ID || (generation !== null && generation > MAX_ID)) {
          this.bad(lineNo, REASON.idTooLarge);
          return;
        }
        this.used++;
        this.emitCookie(slot, generation);
        return;
      }
      if (line.startsWith('<stack trace>', ps) && line.slice(ps, n).trimEnd().length === 13) {
        this.openStack('full', this.comm(h.pid), this.lineCtx());
        return;
      }
      if (line.startsWith('<user stack trace>', ps) && line.slice(ps, n).trimEnd().length === 18) {
        this.openStack('user', this.comm(h.pid), this.lineCtx());
        return;
      }
    }
    // `name: fields` (the name has no space), else function tracer `func <-parent`
    let colon = line.indexOf(':', ps);
    if (colon >= n) colon = -1;
    // no space before the colon
    const named = colon > ps && line.lastIndexOf(' ', colon) < ps;
    if (named && (colon + 1 === n || isBlank(line.charCodeAt(colon + 1)))) {
      const j = skipBlanks(line, colon + 1);
      const len = colon - ps;
      // trace-cmd report prints the stack map's entry by its format: `stack_id: <stack_id N gen G>`
      if (len === 8 && line.startsWith('stack_id', ps) && line.startsWith('<stack_id', j)) {
        this.payload(line, j, n);
        return;
      }
      if (len === 12 && line.startsWith('kernel_stack', ps) && TRACE_CMD_STACK_RE.test(line.slice(j, n))) {
        this.openStack('full', this.comm(h.pid), this.lineCtx());
        return;
      }
      if (len === 10 && line.startsWith('user_stack', ps) && line.startsWith('<user stack trace', j) && j + 17 <= n) {
        this.openStack('user', this.comm(h.pid), this.lineCtx());
        return;
      }
      this.used++;
      // trace-cmd report names them (`bprint: CALLER: text`); the kernel's trace prints the caller alone
      const own =
        len === 6 && line.startsWith('bprint', ps)
          ? 'bprint'
          : len === 5
            ? line.startsWith('print', ps)
              ? 'print'
              : line.startsWith('bputs', ps)
                ? 'bputs'
                : null
            : null;
      if (own) {
        this.emitPrint(own, line, j, n);
        return;
      }
      const k = this.printkHead(line, ps, colon, n);
      if (k !== PRINTK_NONE) {
        this.emitPrint(k === PRINTK_BPRINT ? 'bprint' : 'print', line, ps, n);
        return;
      }
      this.emit(line, ps, colon, line, j, n);
      return;
    }
    this.used++;
    // `do_work [mod]: text`, `do_work <ffffffff81000104>: text`: a trace_printk's caller
    if (colon > ps) {
      const k = printkName(line, ps, n);
      if (k !== PRINTK_NONE) {
        this.emitPrint(k === PRINTK_BPRINT ? 'bprint' : 'print', line, ps, n);
        return;
      }
    }
    const f = line.indexOf(' <-', ps);
    if (f >= 0 && f + 3 <= n) this.emit('function', 0, 8, line, ps, n);
    else this.emit('', 0, 0, line, ps, n);
  }

  /**
   * printkName for a head `line[ps, colon)` known to hold no blank, with a colon then a blank
   * (or the end) after it: only a head that starts with a digit, is 18 long, or holds a `+` or
   * `.` can be one, so most event names are passed over on a look at their length and characters.
   */
  private printkHead(line: string, ps: number, colon: number, n: number): number {
    const c0 = line.charCodeAt(ps);
    if (!(c0 >= 48 && c0 <= 57) && colon - ps !== 18) {
      let k = ps + 1;
      let c = 0;
      while (k < colon && (c = line.charCodeAt(k)) !== 43 && c !== 46) k++;
      if (k === colon) return PRINTK_NONE;
    }
    return printkName(line, ps, n);
  }

  /**
   * A bprint, print or bputs event whose payload is `line[p0, p1)`: to the sink of ids now, or
   * held in `printEv` for its continuation lines.
   */
  private emitPrint(name: PrintName, line: string, p0: number, p1: number): void {
    this.printOpen = true;
    this.printChars = p1 - p0;
    this.printBlanks = 0;
    const fast = this.fast;
    const h = this.head;
    // a reset marker goes to the sink with its message (the columns keep where it is)
    if (fast && !fast.eventMore && !(name === 'print' && isResetMarker(line, p0, p1))) {
      let id = this.printIds[name];
      if (id < 0) id = this.printIds[name] = fast.names.intern(name);
      fast.eventIds(h.ts, h.cpu, h.pid, this.task(fast, h.pid), id, this.lineCtx());
      return;
    }
    this.fill(this.printEv, name, line.slice(p0, p1));
    this.printPending = true;
  }

  /** A full or user stack's `<stack trace>` line, the line's head in `head`: its frame lines follow. */
  protected openStack(kind: 'full' | 'user', comm: string, ctx: number): void {
    const h = this.head;
    this.used++;
    this.open = {
      lineNo: h.lineNo,
      kind,
      comm,
      pid: h.pid,
      cpu: h.cpu,
      ts: h.ts,
      slot: -1,
      generation: null,
      frames: kind === 'full' && this.frameTable ? null : [],
      ctx,
    };
    this.openTask = -1;
    this.frameCount = 0;
  }
}

/** line[from, to) as a string, reused from the 16 most recently seen ones when it is among them. */
function recent(seen: string[], line: string, from: number, to: number): string {
  for (let k = 0; k < seen.length; k++) {
    const f = seen[k];
    if (f.length === to - from && line.startsWith(f, from)) return f;
  }
  const f = line.slice(from, to);
  if (seen.length >= 16) seen.pop();
  seen.unshift(f);
  return f;
}

/** The index of the first character at or after `i` that is not a space or tab. */
function skipBlanks(line: string, i: number): number {
  let c = 0;
  while ((c = line.charCodeAt(i)) === C_SPACE || c === C_TAB) i++;
  return i;
}
