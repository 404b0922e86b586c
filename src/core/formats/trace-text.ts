/**
 * Streaming reader for ftrace trace text (DESIGN 2.1): `trace`, `trace_pipe`, `trace-cmd report`
 * and the latency tracers' format. Compression and systrace HTML are unwrapped elsewhere.
 *
 * Every line is classified by its first non-blank character before any regex runs:
 * blank (used), `#` header, `=>` frame, `CPU...` lost/empty-CPU, `cpus=`/`version =` (trace-cmd),
 * else one event-line regex (then the latency regex). Whatever is left is an unused line with a
 * diagnostic, so lines.total === used + unused always holds.
 */
import { LineSplitter } from './lines.ts';
import { frameKey } from './frames.ts';
import type {
  ChunkParser,
  ParseContext,
  TraceSink,
  TraceStackRecord,
  TraceTextResult,
} from './types.ts';

/** Short, stable diagnostic reasons (they group in the DiagnosticLog). */
export const REASON = {
  notTrace: 'not a trace line',
  notHeader: 'not a trace header',
  orphanFrame: 'frame line without a stack record',
  badStackId: 'malformed stack_id record',
} as const;

/**
 * `COMM-PID [(TGID)] [CPU] [FLAGS] SECONDS.FRACTION: PAYLOAD`.
 * The lazy COMM stops at the first `-digits` that the rest of the line accepts, which is the PID
 * column (a COMM like `jbd2/xvda1-8` keeps its inner `-8`).
 * Groups: 1 comm, 2 pid, 3 tgid, 4 cpu, 5 flags, 6 timestamp, 7 payload.
 */
const EVENT_RE =
  /^\s*(.*?)-(\d+)\s+(?:\(\s*(-+|\d+)\)\s+)?\[(\d+)\]\s+(?:(\S{4,5})\s+)?(\d+\.\d+):(?:\s+|$)(.*)$/;

/**
 * Latency format (irqsoff, preemptoff, wakeup... and `options/latency-format`):
 * `      ps-6143    2d..1  259us+: payload` — CPU digits glued to 4-5 flag characters, then a
 * time in microseconds relative to the start of the trace, then a delay mark.
 * Groups: 1 comm, 2 pid, 3 cpu, 4 flags, 5 microseconds, 6 payload.
 */
const LATENCY_RE = /^\s*(.*?)-(\d+)\s+(\d+)(\S{4,5})\s+(\d+(?:\.\d+)?)us[!#$@*+ ]?:(?:\s+|$)(.*)$/;

const STACK_ID_RE = /^<stack_id (\d+)(?: gen (\d+))?>\s*$/;
const LOST_RE = /^CPU:(\d+) \[(?:LOST (?:(\d+) )?EVENTS|(\d+) EVENTS DROPPED)\]/;
const CPU_EMPTY_RE = /^CPU \d+ is empty\s*$/;
const CPUS_RE = /^cpus=(\d+)\s*$/;
const VERSION_RE = /^version = \d+\s*$/;
const TRACE_CMD_STACK_RE = /^<stack trace ?>\s*$/;
const USER_HEX_RE = /^<([0-9a-fA-F]+)>$/;
/** Column legends and latency-tracer banners, besides the named headers. */
const HEADER_WORDS = /\||=>|TASK-PID|CPU#|TIMESTAMP|DURATION|latency trace|^#\s*-{3,}|^#\s*$/;

const C_SPACE = 32;
const C_TAB = 9;
const C_HASH = 35;
const C_EQ = 61;
const C_GT = 62;
const C_LT = 60;
const C_C = 67;
const C_c = 99;
const C_v = 118;

/**
 * A streaming trace text parser. Events go to `sink.event`; cookies, full and user stacks to
 * `sink.stackRecord` (a full/user stack once its frame block ends); lost-event markers to
 * `sink.lost`.
 *
 * Latency-format lines give `ts` as seconds relative to the start of the latency trace (their
 * `NNNus` column / 1e6), not an absolute clock.
 */
export function createTraceTextParser(ctx: ParseContext, sink: TraceSink): ChunkParser<TraceTextResult> {
  const st = new TraceTextState(ctx, sink);
  const splitter = new LineSplitter((line, lineNo) => st.line(line, lineNo));
  return {
    push(chunk: Uint8Array): void {
      splitter.push(chunk);
    },
    end(): TraceTextResult {
      const total = splitter.end();
      st.flush();
      return {
        lines: { total, used: st.used, unused: st.unused },
        tracer: st.tracer,
        cpus: st.cpus,
      };
    },
  };
}

class TraceTextState {
  used = 0;
  unused = 0;
  tracer: string | null = null;
  cpus: number | null = null;
  /** full or user stack whose frame lines are being read */
  private open: TraceStackRecord | null = null;

  constructor(
    private readonly ctx: ParseContext,
    private readonly sink: TraceSink,
  ) {}

  flush(): void {
    if (this.open) {
      const r = this.open;
      this.open = null;
      this.sink.stackRecord(r);
    }
  }

  private bad(lineNo: number, reason: string): void {
    this.unused++;
    this.ctx.diagnostics.atLine(lineNo, reason);
  }

  line(line: string, lineNo: number): void {
    const n = line.length;
    let i = 0;
    let c = 0;
    while (i < n && ((c = line.charCodeAt(i)) === C_SPACE || c === C_TAB)) i++;
    if (i === n) {
      this.flush();
      this.used++;
      return;
    }
    if (c === C_EQ && line.charCodeAt(i + 1) === C_GT) {
      this.frame(line, i + 2, lineNo);
      return;
    }
    this.flush();
    if (c === C_HASH && i === 0) {
      this.header(line, lineNo);
      return;
    }
    if (i === 0) {
      if (c === C_C && line.startsWith('CPU', 0)) {
        const m = LOST_RE.exec(line);
        if (m) {
          const count = m[2] ?? m[3];
          this.sink.lost({ lineNo, cpu: +m[1], count: count === undefined ? null : +count });
          this.used++;
          return;
        }
        if (CPU_EMPTY_RE.test(line)) {
          this.used++;
          return;
        }
      } else if (c === C_c) {
        const m = CPUS_RE.exec(line);
        if (m) {
          this.cpus = +m[1];
          this.used++;
          return;
        }
      } else if (c === C_v && VERSION_RE.test(line)) {
        this.used++;
        return;
      }
    }
    let m = EVENT_RE.exec(line);
    if (m) {
      const t = m[3];
      const tgid = t === undefined || t.charCodeAt(0) === 45 /* - */ ? null : +t;
      this.payload(m[7], m[1], +m[2], tgid, +m[4], m[5] ?? '', parseFloat(m[6]), lineNo);
      return;
    }
    m = LATENCY_RE.exec(line);
    if (m) {
      this.payload(m[6], m[1], +m[2], null, +m[3], m[4], parseFloat(m[5]) / 1e6, lineNo);
      return;
    }
    this.bad(lineNo, REASON.notTrace);
  }

  private frame(line: string, from: number, lineNo: number): void {
    const r = this.open;
    if (!r) {
      this.bad(lineNo, REASON.orphanFrame);
      return;
    }
    const printed = line.slice(from).trim();
    let key: string;
    const u = r.kind === 'user' && printed.charCodeAt(0) === C_LT ? USER_HEX_RE.exec(printed) : null;
    if (u) key = '0x' + (u[1].toLowerCase().replace(/^0+(?=.)/, ''));
    else key = frameKey(printed);
    r.frames!.push(key);
    this.used++;
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

  private payload(
    p: string,
    rawComm: string,
    pid: number,
    tgid: number | null,
    cpu: number,
    flags: string,
    ts: number,
    lineNo: number,
  ): void {
    const comm = rawComm.trimStart();
    const c0 = p.charCodeAt(0);
    if (c0 === C_LT) {
      if (p.startsWith('<stack_id')) {
        const m = STACK_ID_RE.exec(p);
        if (!m) {
          this.bad(lineNo, REASON.badStackId);
          return;
        }
        this.used++;
        this.sink.stackRecord({
          lineNo,
          kind: 'cookie',
          comm,
          pid,
          cpu,
          ts,
          slot: +m[1],
          generation: m[2] === undefined ? null : +m[2],
          frames: null,
        });
        return;
      }
      if (p.startsWith('<stack trace>') && p.trimEnd().length === 13) {
        this.openStack('full', comm, pid, cpu, ts, lineNo);
        return;
      }
      if (p.startsWith('<user stack trace>') && p.trimEnd().length === 18) {
        this.openStack('user', comm, pid, cpu, ts, lineNo);
        return;
      }
    }
    // `name: fields` (the name has no space), else function tracer `func <-parent`
    const colon = p.indexOf(':');
    const space = p.indexOf(' ');
    const named = colon > 0 && (space < 0 || colon < space);
    if (named && (colon + 1 === p.length || isBlank(p.charCodeAt(colon + 1)))) {
      const name = p.slice(0, colon);
      let j = colon + 1;
      while (j < p.length && isBlank(p.charCodeAt(j))) j++;
      const fields = p.slice(j);
      if (name === 'kernel_stack' && TRACE_CMD_STACK_RE.test(fields)) {
        this.openStack('full', comm, pid, cpu, ts, lineNo);
        return;
      }
      if (name === 'user_stack' && fields.startsWith('<user stack trace')) {
        this.openStack('user', comm, pid, cpu, ts, lineNo);
        return;
      }
      this.used++;
      this.sink.event({ lineNo, comm, pid, tgid, cpu, ts, flags, name, payload: fields });
      return;
    }
    this.used++;
    const name = p.includes(' <-') ? 'function' : '';
    this.sink.event({ lineNo, comm, pid, tgid, cpu, ts, flags, name, payload: p });
  }

  private openStack(kind: 'full' | 'user', comm: string, pid: number, cpu: number, ts: number, lineNo: number): void {
    this.used++;
    this.open = { lineNo, kind, comm, pid, cpu, ts, slot: -1, generation: null, frames: [] };
  }
}

function isBlank(c: number): boolean {
  return c === C_SPACE || c === C_TAB;
}
