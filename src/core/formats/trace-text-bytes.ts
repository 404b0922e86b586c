/**
 * The trace text reader's byte path (trace-text.ts says when it runs): into a sink of ids, the
 * common lines (an event whose head, COMM and name are ASCII with an ordinary payload or a cookie,
 * a `<stack trace>`, a frame of a full stack) read from the chunk's bytes, no UTF-8 decoded, with
 * its caches: the last line's head (a stack record after its event takes it again), the chunk's
 * DataView, frame ids by their bytes. A line it does not read is left to the text path it extends
 * (trace-text-reader.ts), which it matches check for check.
 */
import { frameKey, noteFrameModule, simpleFrameKeyEnd } from './frames.ts';
import { asciiBytes, asciiText, contextOfBytes, IdsByBytes, sameAscii, startsWithBytes } from './trace-bytes.ts';
import { TraceTextReader } from './trace-text-reader.ts';
import * as shared from './trace-text-shared.ts';
import type { ColumnSink, InternTable, LineHead } from './trace-text-shared.ts';

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
  FAST_DONE,
  FAST_NO,
  FAST_UNSURE,
  isBlank,
  MAX_I32,
  MAX_ID,
  MAX_TS_NS_SECONDS,
  maybeSpace,
  POW10,
} = shared;

/** The reader a parser makes: the text path, and the common lines read from their bytes first. */
export class TraceTextBytes extends TraceTextReader {
  /** the byte path (`bytes`): where the flags of the line it read end, and where its payload starts */
  private bFlagsFrom = 0;
  private bFlagsTo = 0;
  private bPayload = 0;
  /**
   * The head of the last line headBytes read, up to its payload: `lastBytes[lastStart,
   * lastStart + sameHead)` (sameHead 0: none; forgotten with the chunk, bytesDone), where its COMM
   * ends and its flags lie, and its task (-1 until known). `bTask`: the line's task when known.
   */
  private lastBytes: Uint8Array | null = null;
  /** a DataView of the chunk the last head is in (sameHere) */
  private view: DataView | null = null;
  private viewOf: Uint8Array | null = null;
  private lastStart = 0;
  /** that head's values (`head` is the line's own: the text path changes it) */
  private readonly last: Omit<LineHead, 'lineNo'> = { pid: 0, tgid: null, cpu: 0, ts: 0 };
  private sameHead = 0;
  private lastDash = 0;
  private lastFlagsFrom = 0;
  private lastFlagsTo = 0;
  private lastTask = -1;
  private bTask = -1;
  /** frame ids by their key's bytes (the byte path's frame lines) */
  private readonly frameKeys = new IdsByBytes();
  /** decodes a payload for a sink without `eventMoreBytes` */
  private decoder: TextDecoder | null = null;

  /** A DataView of all of `b` (made once a chunk). */
  private dataView(b: Uint8Array): DataView {
    if (this.viewOf !== b) {
      this.view = new DataView(b.buffer, b.byteOffset, b.byteLength);
      this.viewOf = b;
    }
    return this.view!;
  }

  /** Whether `b[start, start + n)` is the last head, `b[lastStart, lastStart + n)`: four bytes at a time. */
  private sameHere(b: Uint8Array, start: number, n: number): boolean {
    const dv = this.dataView(b);
    const at = this.lastStart;
    let k = n - 4;
    for (; k >= 0; k -= 4) if (dv.getInt32(start + k) !== dv.getInt32(at + k)) return false;
    for (k += 3; k >= 0; k--) if (b[start + k] !== b[at + k]) return false;
    return true;
  }

  /** A chunk was read: nothing keeps its bytes. */
  bytesDone(): void {
    this.view = null;
    this.viewOf = null;
    this.lastBytes = null;
    this.sameHead = 0;
    this.fast?.bytesDone?.();
  }

  private setLast(pid: number, tgid: number | null, cpu: number, ts: number): void {
    const l = this.last;
    l.pid = pid;
    l.tgid = tgid;
    l.cpu = cpu;
    l.ts = ts;
  }

  /**
   * A line read from its bytes (LineSplitter's `onBytes`): `b[start, end)`, UTF-8 holding no CR,
   * U+2028 or U+2029, with `b[end]` a CR or a newline. True when it was read here: an event line
   * whose COMM, name and head are ASCII, with a cookie, a `<stack trace>` or an ordinary payload,
   * or a frame line of a full stack the sink takes as ids, each given to the sink as `range`
   * gives it (the same checks in the same order, over bytes); false before anything is given
   * leaves it to be decoded and read as text (`range`, then `line`).
   */
  bytes(b: Uint8Array, start: number, end: number, lineNo: number): boolean {
    let i = start;
    let c = 0;
    while (i < end && ((c = b[i]) === C_SPACE || c === C_TAB)) i++;
    if (c === C_EQ && i < end && b[i + 1] === C_GT && this.open !== null && this.frameTable !== null && this.open.kind === 'full')
      return this.frameBytes(b, i + 2, end, this.frameTable);
    if (i === end || c <= C_SPACE || c >= 0x7f || c === C_EQ || c === C_HASH) return false;
    if (i === start && (c === C_C || c === C_c || c === C_v)) return false;
    // not blank and not a frame: `range` flushes here as well
    this.flush();
    // the head of the last line read here again, up to its payload (a stack record right after
    // its event): headBytes reads nothing else of a line but its payload's first byte (not a
    // blank, and no other white space unless the line ends there) and whether the line ends
    // there, so the line reads as that one did
    const same = this.sameHead;
    if (
      same > 0 &&
      end - start >= same &&
      this.lastBytes !== null &&
      (this.lastBytes === b ? this.sameHere(b, start, same) : sameBytes(b, start, this.lastBytes, this.lastStart, same))
    ) {
      const c = b[start + same];
      if (start + same === end || (c > C_SPACE && c < 0x7f)) {
        const l = this.last;
        this.setLine(lineNo, l.pid, l.tgid, l.cpu, l.ts);
        this.bFlagsFrom = start + this.lastFlagsFrom;
        this.bFlagsTo = start + this.lastFlagsTo;
        this.bPayload = start + same;
        this.bTask = this.lastTask;
        this.lastBytes = b;
        this.lastStart = start;
        return this.payloadBytes(b, i, start + this.lastDash, end);
      }
    }
    this.sameHead = 0;
    // the lazy COMM: the first `-` whose rest of the line is a head (fastEvent)
    for (let d = i; d < end; d++) {
      if (b[d] !== C_DASH) continue;
      const r = this.headBytes(b, d, end, lineNo);
      if (r === FAST_DONE) {
        this.bTask = -1;
        // a head whose payload follows blanks (else the line must end at its colon)
        const ps = this.bPayload;
        if (ps > start && (b[ps - 1] === C_SPACE || b[ps - 1] === C_TAB)) {
          this.sameHead = ps - start;
          this.lastBytes = b;
          this.lastStart = start;
          const h = this.head;
          this.setLast(h.pid, h.tgid, h.cpu, h.ts);
          this.lastTask = -1;
          this.lastDash = d - start;
          this.lastFlagsFrom = this.bFlagsFrom - start;
          this.lastFlagsTo = this.bFlagsTo - start;
        }
        return this.payloadBytes(b, i, d, end);
      }
      if (r === FAST_UNSURE) return false;
    }
    return false;
  }

  /** fastRest's head over bytes, from the `-` at `d`: on FAST_DONE the head is in `head`, the flags and payload in bFlags* and bPayload. */
  private headBytes(b: Uint8Array, d: number, n: number, lineNo: number): number {
    // -PID\s+
    const pid = this.digitsBytes(b, d + 1);
    if (pid !== pid) return FAST_NO;
    let i = this.numEnd;
    let k = skipBlanksBytes(b, i);
    if (k === i) return maybeSpace(b[i]) ? FAST_UNSURE : FAST_NO;
    i = k;
    let c = b[i];
    if (maybeSpace(c)) return FAST_UNSURE;
    // (TGID)\s+
    let tgid: number | null = null;
    if (c === C_LPAREN) {
      i = skipBlanksBytes(b, i + 1);
      c = b[i];
      if (c === C_DASH) {
        while (b[i] === C_DASH) i++;
      } else {
        tgid = this.digitsBytes(b, i);
        if (tgid !== tgid) return maybeSpace(c) ? FAST_UNSURE : FAST_NO;
        i = this.numEnd;
      }
      c = b[i];
      if (c !== C_RPAREN) return maybeSpace(c) ? FAST_UNSURE : FAST_NO;
      k = skipBlanksBytes(b, i + 1);
      if (k === i + 1) return maybeSpace(b[k]) ? FAST_UNSURE : FAST_NO;
      i = k;
      c = b[i];
    }
    // [CPU]\s+
    if (c !== C_LBRACKET) return maybeSpace(c) ? FAST_UNSURE : FAST_NO;
    const cpu = this.digitsBytes(b, i + 1);
    if (cpu !== cpu) return FAST_NO;
    i = this.numEnd;
    if (b[i] !== C_RBRACKET) return FAST_NO;
    i++;
    k = skipBlanksBytes(b, i);
    if (k === i) return maybeSpace(b[i]) ? FAST_UNSURE : FAST_NO;
    i = k;
    // a token of 4-5 printable characters then blanks is FLAGS; else the token is the time
    const tok = i;
    let t = i;
    while (t < n && (c = b[t]) > C_SPACE && c < 0x7f) t++;
    let flagsTo = tok;
    let ts0 = i;
    if (t < n && c !== C_SPACE && c !== C_TAB) return FAST_UNSURE;
    const len = t - i;
    if (len === 4 || len === 5) {
      if (t === n) return FAST_UNSURE;
      flagsTo = t;
      ts0 = skipBlanksBytes(b, t);
      if (maybeSpace(b[ts0])) return FAST_UNSURE;
    }
    // SECONDS.FRACTION:(\s+|$)
    const ts = this.timeBytes(b, ts0);
    if (ts !== ts) return FAST_UNSURE;
    i = this.numEnd;
    if (b[i] !== C_COLON) return FAST_UNSURE;
    i++;
    const ps = skipBlanksBytes(b, i);
    if (ps === i && i !== n) return FAST_UNSURE;
    if (ps < n && maybeSpace(b[ps])) return FAST_UNSURE;
    if (flagsTo === tok && i !== t) return FAST_UNSURE;
    this.setLine(lineNo, pid, tgid, cpu, ts);
    this.bFlagsFrom = tok;
    this.bFlagsTo = flagsTo;
    this.bPayload = ps;
    return FAST_DONE;
  }

  /**
   * `payload` over bytes for the lines it reads without a diagnostic or a print event: the COMM
   * is `b[from, d)`, the payload from bPayload to `n`. False for the others, with nothing given
   * to the sink but the print event `payload` would give first too.
   */
  private payloadBytes(b: Uint8Array, from: number, d: number, n: number): boolean {
    const h = this.head;
    const fast = this.fast!;
    // as `payload` does first (a print event held for its continuation lines goes to the sink before this line's)
    this.flushPrint();
    if (h.pid > MAX_I32 || h.cpu > MAX_I32 || (h.tgid !== null && h.tgid > MAX_I32) || h.ts >= MAX_TS_NS_SECONDS) return false;
    const ps = this.bPayload;
    if (b[ps] === C_LT) {
      if (startsWithBytes(b, ps, B_STACK_ID)) return this.cookieBytes(b, from, d, ps, n);
      const full = startsWithBytes(b, ps, B_STACK_TRACE);
      if (full || startsWithBytes(b, ps, B_USER_STACK_TRACE)) {
        // blanks after it other than spaces and tabs: as text (trimEnd's white space)
        if (!onlyBlanks(b, ps + (full ? 13 : 18), n)) return false;
        // a full stack into ids takes its task now, as flush would (only frame lines come between)
        const task = full && this.frameTable !== null ? (this.bTask >= 0 ? this.bTask : this.taskBytes(fast, b, from, d, h.pid)) : -1;
        const comm = task >= 0 ? fast.tasks.strings[task] : this.commBytes(fast, b, from, d, h.pid);
        if (comm === null) return false;
        this.openStack(full ? 'full' : 'user', comm, contextOfBytes(b, this.bFlagsFrom, this.bFlagsTo));
        if (task >= 0) this.openTask = this.lastTask = task;
        return true;
      }
    }
    // `name: fields` (no space before the colon), else function tracer `func <-parent`; a `+`
    // or `.` before the colon may make the head a trace_printk's caller (printkHead)
    let colon = -1;
    let spaced = false;
    let printk = false;
    for (let k = ps; k < n; k++) {
      const c = b[k];
      if (c === C_COLON) {
        colon = k;
        break;
      }
      if (c === C_SPACE) spaced = true;
      else if (c === 43 || c === C_DOT) printk = k > ps;
    }
    let name: number;
    let p0 = ps;
    if (colon > ps && !spaced && (colon + 1 === n || isBlank(b[colon + 1]))) {
      const len = colon - ps;
      // trace-cmd's stack entries and the events whose message may go on over lines: as text
      if (
        (len === 8 && startsWithBytes(b, ps, B_STACK_ID_NAME)) ||
        (len === 12 && startsWithBytes(b, ps, B_KERNEL_STACK)) ||
        (len === 10 && startsWithBytes(b, ps, B_USER_STACK)) ||
        (len === 6 && startsWithBytes(b, ps, B_BPRINT)) ||
        (len === 5 && (startsWithBytes(b, ps, B_PRINT) || startsWithBytes(b, ps, B_BPUTS)))
      ) {
        return false;
      }
      // a head printkHead would look at further (a trace_printk's caller): as text
      const c0 = b[ps];
      if ((c0 >= 48 && c0 <= 57) || len === 18 || printk) return false;
      name = this.nameBytes(fast, b, ps, colon);
      if (name < 0) return false;
      p0 = skipBlanksBytes(b, colon + 1);
    } else {
      // printkName may make it a print event: as text
      if (colon > ps) return false;
      let arrow = false;
      for (let k = ps; k + 3 <= n; k++) {
        if (b[k] === C_SPACE && b[k + 1] === C_LT && b[k + 2] === C_DASH) {
          arrow = true;
          break;
        }
      }
      name = arrow ? this.name(fast, 'function', 0, 8) : this.name(fast, '', 0, 0);
    }
    const task = this.bTask >= 0 ? this.bTask : this.taskBytes(fast, b, from, d, h.pid);
    if (task < 0) return false;
    this.lastTask = task;
    this.used++;
    fast.eventIds(h.ts, h.cpu, h.pid, task, name, contextOfBytes(b, this.bFlagsFrom, this.bFlagsTo));
    if (fast.eventMoreBytes) fast.eventMoreBytes(h.tgid ?? -1, b, p0, n);
    else if (fast.eventMore) {
      const text = (this.decoder ??= new TextDecoder()).decode(b.subarray(p0, n));
      fast.eventMore(h.tgid ?? -1, text, 0, text.length);
    }
    return true;
  }

  /** fastCookie over bytes: `<stack_id N[ gen G]>` then blanks at `ps`, the COMM `b[from, d)`; false if it is not exactly that. */
  private cookieBytes(b: Uint8Array, from: number, d: number, ps: number, n: number): boolean {
    let i = ps + 9;
    if (b[i] !== C_SPACE) return false;
    const slot = this.digitsBytes(b, i + 1);
    if (slot !== slot) return false;
    i = this.numEnd;
    let generation = -1;
    if (startsWithBytes(b, i, B_GEN)) {
      generation = this.digitsBytes(b, i + 5);
      if (generation !== generation) return false;
      i = this.numEnd;
    }
    if (b[i] !== C_GT) return false;
    i = skipBlanksBytes(b, i + 1);
    if (i !== n) return false;
    // a slot or generation beyond 32 bits: the text path reports it
    if (slot > MAX_ID || generation > MAX_ID) return false;
    const fast = this.fast!;
    const h = this.head;
    const task = this.bTask >= 0 ? this.bTask : this.taskBytes(fast, b, from, d, h.pid);
    if (task < 0) return false;
    this.lastTask = task;
    this.used++;
    fast.cookieIds(h.ts, h.cpu, h.pid, task, slot, generation, contextOfBytes(b, this.bFlagsFrom, this.bFlagsTo));
    return true;
  }

  /**
   * `frame` for a full stack's frame line over bytes, `b[from, end)` after its `=>`: its id is
   * frameId's for the same text, which depends on nothing but the frame as trimmed of spaces and
   * tabs (its module noted once: noteFrameModule does nothing the second time), so a frame seen
   * before takes the id it had then (frameKeys); false for one whose text is not ASCII.
   */
  private frameBytes(b: Uint8Array, from: number, end: number, table: InternTable): boolean {
    let a = from;
    let e = end;
    let c = 0;
    while (a < e && ((c = b[a]) === C_SPACE || c === C_TAB)) a++;
    while (e > a && ((c = b[e - 1]) === C_SPACE || c === C_TAB)) e--;
    let id = this.frameKeys.find(b, a, e);
    if (id < 0) {
      const text = asciiText(b, a, e);
      if (text === null) return false;
      this.flushPrint();
      const keyEnd = simpleFrameKeyEnd(text, 0, text.length);
      if (text.charCodeAt(text.length - 1) === 93 /* ] */) noteFrameModule(text, 0, text.length, this.ctx.modules);
      id = keyEnd >= 0 ? table.internRange(text, 0, keyEnd) : table.intern(frameKey(asciiText(b, from, end)!.trim()));
      this.frameKeys.put(text, id);
    } else this.flushPrint();
    if (this.frameCount === this.frameIds.length) {
      const next = new Int32Array(this.frameIds.length * 2);
      next.set(this.frameIds);
      this.frameIds = next;
    }
    this.frameIds[this.frameCount++] = id;
    this.used++;
    return true;
  }

  /** `task` over bytes: the id of the COMM `b[from, to)`, -1 when it is not ASCII (then read as text). */
  private taskBytes(fast: ColumnSink, b: Uint8Array, from: number, to: number, pid: number): number {
    const k = pid & 1023;
    if (this.taskPid[k] === pid) {
      const id = this.taskId[k];
      if (this.taskKeys.has(k, b, this.dataView(b), from, to)) return id;
      const s = fast.tasks.strings[id];
      if (s !== undefined && sameAscii(b, from, to, s)) {
        this.taskKeys.set(k, b, from, to);
        return id;
      }
    }
    const s = asciiText(b, from, to);
    if (s === null) return -1;
    const id = fast.tasks.intern(s);
    this.taskPid[k] = pid;
    this.taskId[k] = id;
    this.taskKeys.set(k, b, from, to);
    return id;
  }

  /** The COMM `b[from, to)` as a string (the task's when it is the one last seen for `pid`), null when it is not ASCII. */
  private commBytes(fast: ColumnSink, b: Uint8Array, from: number, to: number, pid: number): string | null {
    const k = pid & 1023;
    if (this.taskPid[k] === pid) {
      const s = fast.tasks.strings[this.taskId[k]];
      if (s !== undefined && sameAscii(b, from, to, s)) return s;
    }
    return asciiText(b, from, to);
  }

  /** `name` over bytes: the id of the event name `b[from, to)`, -1 when it is not ASCII. */
  private nameBytes(fast: ColumnSink, b: Uint8Array, from: number, to: number): number {
    const k = (to - from) & 63;
    const last = this.nameId[k];
    if (last >= 0) {
      if (this.nameKeys.has(k, b, this.dataView(b), from, to)) return last;
      const s = fast.names.strings[last];
      if (s !== undefined && sameAscii(b, from, to, s)) {
        this.nameKeys.set(k, b, from, to);
        return last;
      }
    }
    const s = asciiText(b, from, to);
    if (s === null) return -1;
    const id = fast.names.intern(s);
    this.nameId[k] = id;
    this.nameKeys.set(k, b, from, to);
    return id;
  }

  /** digitsAt over bytes. */
  private digitsBytes(b: Uint8Array, i: number): number {
    let v = 0;
    let k = i;
    let c = 0;
    while ((c = b[k] - 48) >= 0 && c <= 9) {
      v = v * 10 + c;
      k++;
    }
    this.numEnd = k;
    if (k === i) return NaN;
    return k - i > 15 ? +asciiText(b, i, k)! : v;
  }

  /** timeAt over bytes: `\d+\.\d+` at `start` as parseFloat reads it (NaN if not there); `numEnd` is set after it. */
  private timeBytes(b: Uint8Array, start: number): number {
    let v = 0;
    let k = start;
    let c = 0;
    while ((c = b[k] - 48) >= 0 && c <= 9) {
      v = v * 10 + c;
      k++;
    }
    const dot = k;
    if (dot === start || b[dot] !== C_DOT) {
      this.numEnd = k;
      return NaN;
    }
    k++;
    while ((c = b[k] - 48) >= 0 && c <= 9) {
      v = v * 10 + c;
      k++;
    }
    this.numEnd = k;
    if (k === dot + 1) return NaN;
    const frac = k - dot - 1;
    if (frac > this.timeDigits) this.timeDigits = frac;
    if (k - start - 1 <= 15 && frac <= 22) return v / POW10[frac];
    return parseFloat(asciiText(b, start, k)!);
  }
}

/** Whether `b[from, from + n)` is `a[at, at + n)` (compared from the end: heads differ in their times first). */
function sameBytes(b: Uint8Array, from: number, a: Uint8Array, at: number, n: number): boolean {
  for (let k = n - 1; k >= 0; k--) if (b[from + k] !== a[at + k]) return false;
  return true;
}

/** skipBlanks over bytes. */
function skipBlanksBytes(b: Uint8Array, i: number): number {
  let c = 0;
  while ((c = b[i]) === C_SPACE || c === C_TAB) i++;
  return i;
}

/** Whether `b[from, to)` holds only spaces and tabs. */
function onlyBlanks(b: Uint8Array, from: number, to: number): boolean {
  for (let i = from; i < to; i++) if (b[i] !== C_SPACE && b[i] !== C_TAB) return false;
  return true;
}

/** What the byte path looks for (trace-bytes.ts startsWithBytes). */
const B_STACK_ID = asciiBytes('<stack_id');
const B_STACK_TRACE = asciiBytes('<stack trace>');
const B_USER_STACK_TRACE = asciiBytes('<user stack trace>');
const B_GEN = asciiBytes(' gen ');
const B_STACK_ID_NAME = asciiBytes('stack_id');
const B_KERNEL_STACK = asciiBytes('kernel_stack');
const B_USER_STACK = asciiBytes('user_stack');
const B_BPRINT = asciiBytes('bprint');
const B_PRINT = asciiBytes('print');
const B_BPUTS = asciiBytes('bputs');
