import { runInNewContext } from 'node:vm';
import fc from 'fast-check';
import { beforeAll, describe, expect, it } from 'vitest';
import { ingestFiles } from '../testing/test-helpers.ts';
import { feedChunks, feedCuts, fixture } from '../testing/formats.ts';
import { readEveryWay, readers } from '../testing/reader-kit.ts';
import { realDescribe, realTrace } from '../testing/real-traces.ts';
import { DiagnosticLog } from './diagnostics.ts';
import { TOO_LONG } from './lines.ts';
import { sniffKind } from './sniff.ts';
import { createSystraceHtmlParser, findLinuxPerfData, LEGACY } from './systrace-html.ts';
import { createTraceTextParser } from './trace-text.ts';
import type { TraceEvent, TraceSink, TraceStackRecord, TraceTextResult } from './types.ts';

// Legacy systrace HTML (`var linuxPerfData = "\` ... `\n";`): the events its string holds, every
// line of the page accounted. The second methods are written here: catapult's own extraction
// (ftrace_importer.html _extractEventsFromSystraceHTML: the lines between the `var linuxPerfData`
// line and `</script>`, their `\n\` and `\n";` suffixes cut), trappy's (systrace.py: the lines
// after `var linuxPerfData` up to `</script>`), the JavaScript engine itself (node:vm evaluates the
// script), a count of the kernel's event line shape in the text, and the same text read as plain
// ftrace text. No real legacy file is at hand: the fixtures are written by hand in the three
// shapes, and the real ftrace texts are wrapped in them here, in the test.

const enc = new TextEncoder();
const dec = new TextDecoder();

interface Read {
  r: TraceTextResult;
  events: TraceEvent[];
  records: TraceStackRecord[];
  diags: [string, string][];
}

function collect(): { sink: TraceSink; events: TraceEvent[]; records: TraceStackRecord[] } {
  const events: TraceEvent[] = [];
  const records: TraceStackRecord[] = [];
  return { sink: { event: (e) => events.push({ ...e }), stackRecord: (r) => records.push({ ...r }), lost: () => {} }, events, records };
}

function readHtml(bytes: Uint8Array, chunk = 0): Read {
  const log = new DiagnosticLog('t.html');
  const c = collect();
  const r = feedChunks(createSystraceHtmlParser({ file: 't.html', diagnostics: log }, c.sink), bytes, chunk);
  return { r, events: c.events, records: c.records, diags: log.list().map((d) => [d.where, d.message]) };
}

function readText(text: string): Read {
  const log = new DiagnosticLog('t.txt');
  const c = collect();
  const r = feedChunks(createTraceTextParser({ file: 't.txt', diagnostics: log }, c.sink), enc.encode(text), 0);
  return { r, events: c.events, records: c.records, diags: log.list().map((d) => [d.where, d.message]) };
}

/** Reads every way (reader-kit.ts: every chunk size, renamed `unknown` through the sniffer, the page's lines), returns the one-chunk reading. */
function readAll(bytes: Uint8Array): Read {
  const k = readEveryWay('t.html', bytes, readers.systraceHtml);
  return { r: k.result, events: k.got.events, records: k.got.stacks, diags: k.diagnostics.map((d) => [d.where, d.message]) };
}

/** Events without their line numbers, and the line numbers apart. */
const strip = (es: TraceEvent[]) => es.map(({ lineNo: _, ...e }) => e);
const strip2 = (rs: TraceStackRecord[]) => rs.map(({ lineNo: _, ...r }) => r);
const perName = (es: { name: string }[]) => {
  const m: Record<string, number> = {};
  for (const e of es) m[e.name] = (m[e.name] ?? 0) + 1;
  return m;
};
const linesOf = (text: string) => text.split('\n').length - (text.endsWith('\n') ? 1 : 0);

/** catapult's extraction: the HTML line of the first data line, and the data lines. */
function catapultExtract(html: string): { first: number; lines: string[] } {
  const lines = html.split('\n');
  const s = lines.findIndex((l, i) => l === '  <script>' && /^  var linuxPerfData = "\\$/.test(lines[i + 1] ?? ''));
  expect(s).toBeGreaterThanOrEqual(0);
  const e = lines.findIndex((l, i) => i > s + 1 && l === '  </script>');
  const raw = lines.slice(s + 2, e).map((l) => (l.endsWith('\\n\\') ? l.slice(0, -3) : l));
  expect(raw[raw.length - 1].endsWith('\\n";')).toBe(true);
  raw[raw.length - 1] = raw[raw.length - 1].slice(0, -4);
  return { first: s + 3, lines: raw };
}

/** trappy's extraction: the lines after `var linuxPerfData` up to the one ending in `</script>`. */
function trappyExtract(html: string): { first: number; lines: string[] } {
  const lines = html.split('\n');
  const s = lines.findIndex((l) => l.startsWith('  var linuxPerfData'));
  const e = lines.findIndex((l, i) => i > s && l.endsWith('</script>'));
  return { first: s + 2, lines: lines.slice(s + 1, e) };
}

/** The JavaScript engine's reading: the script run, linuxPerfData read back. */
function jsExtract(script: string): string {
  return runInNewContext(`${script}; linuxPerfData`) as string;
}

/** Lines of the kernel's event line shape (`COMM-PID [(TGID)] [CPU] [FLAGS] SECS.FRAC: `), stack records left out. */
function kernelEventLines(text: string): number {
  const shape = /^\s*.+-\d+\s+(?:\(\s*(?:-+|\d+)\)\s+)?\[\d+\]\s+(?:\S{4,5}\s+)?\d+\.\d+: (.*)$/;
  return text.split('\n').filter((l) => {
    const m = shape.exec(l);
    return m !== null && !m[1].startsWith('<stack');
  }).length;
}

describe('legacy systrace HTML fixtures', () => {
  it("legacy-continued: systrace-legacy.py's shape, as catapult reads it", () => {
    const bytes = fixture('systrace_html/legacy-continued.html');
    const html = dec.decode(bytes);
    const got = readAll(bytes);
    const { first, lines } = catapultExtract(html);
    const want = readText(lines.join('\n'));
    expect(strip(got.events)).toEqual(strip(want.events));
    expect(strip2(got.records)).toEqual(strip2(want.records));
    // the events' lines are the HTML lines they came from
    expect(got.events.map((e) => e.lineNo)).toEqual(want.events.map((e) => e.lineNo + first - 1));
    // 8 event lines of the kernel's shape and one <stack_id> record
    expect(got.events).toHaveLength(kernelEventLines(lines.join('\n')));
    expect(got.events).toHaveLength(8);
    expect(got.records.map((r) => [r.kind, r.slot, r.lineNo])).toEqual([['cookie', 42, 32]]);
    // named as the kernel's events: its trace_marker writes print `tracing_mark_write` (or `0`
    // before 3.4) for a caller, its trace_printk the caller's address or `sym+0xoff/0xsize`
    expect(perName(got.events)).toEqual({ sched_switch: 1, print: 4, bprint: 2, kmem_cache_alloc: 1 });
    // the legacy writer escaped nothing: a backslash before a letter JavaScript has no escape for is kept
    expect(got.events.find((e) => e.payload.includes('C:'))!.payload).toBe('tracing_mark_write: B|212|load C:\\data\\app');
    expect(got.r).toEqual({ lines: { total: 39, used: 39, unused: 0 }, tracer: 'nop', cpus: 2 });
    expect(got.diags).toEqual([]);
  });

  it('legacy-one-string: the trace as one JavaScript string on a line, as the JavaScript engine reads it', () => {
    const bytes = fixture('systrace_html/legacy-one-string.html');
    const html = dec.decode(bytes);
    const got = readAll(bytes);
    const line3 = html.split('\n')[2];
    const text = jsExtract(line3.slice('<script>'.length, line3.indexOf('</script>')));
    const want = readText(text);
    expect(strip(got.events)).toEqual(strip(want.events));
    expect(got.events.every((e) => e.lineNo === 3)).toBe(true);
    expect(got.events).toHaveLength(kernelEventLines(text));
    expect(got.events.map((e) => [e.name, e.payload])).toEqual([
      ['sched_switch', 'prev_comm=swapper/1 prev_pid=0 prev_prio=120 prev_state=R ==> next_comm=bash next_pid=900 next_prio=120'],
      ['print', 'tracing_mark_write: B|900|say "hi" it\'s'],
      ['print', 'tracing_mark_write: path C:\\tmp\tend'],
      ['print', 'tracing_mark_write: caf\u00e9 \u{1f600}'],
      ['sched_waking', 'comm=kworker/1:0 pid=17 prio=120 target_cpu=001'],
    ]);
    // its one bad trace line makes the HTML line it is on unused: one line of five
    expect(want.diags).toEqual([['line 8', 'not a trace line']]);
    expect(got.diags).toEqual([['line 3', 'not a trace line']]);
    expect(got.r).toEqual({ lines: { total: 5, used: 4, unused: 1 }, tracer: 'nop', cpus: null });
  });

  it("legacy-trappy: lines without the `\\n\\` continuation (trappy's test copy), as trappy reads them", () => {
    const bytes = fixture('systrace_html/legacy-trappy.html');
    const html = dec.decode(bytes);
    const got = readAll(bytes);
    const { first, lines } = trappyExtract(html);
    const want = readText(lines.join('\n'));
    expect(strip(got.events)).toEqual(strip(want.events));
    expect(got.events.map((e) => e.lineNo)).toEqual(want.events.map((e) => e.lineNo + first - 1));
    expect(got.events).toHaveLength(kernelEventLines(lines.join('\n')));
    expect(got.events).toHaveLength(4);
    expect(got.r).toEqual({ lines: { total: 26, used: 26, unused: 0 }, tracer: 'nop', cpus: 8 });
    // the string is not closed: `</script>` ends it, as it ends the script for a browser
    expect(got.diags).toEqual([
      ['line 14', LEGACY.lineBreak],
      ['line 24', LEGACY.notClosed],
    ]);
  });

  it.each(['legacy-continued', 'legacy-one-string', 'legacy-trappy'])(
    '%s in UTF-16 LE and BE with a byte-order mark (made here, unit by unit): read as the UTF-8 file',
    (name) => {
      const bytes = fixture(`systrace_html/${name}.html`);
      const text = dec.decode(bytes);
      const want = readHtml(bytes);
      for (const le of [true, false]) {
        const u = new Uint8Array(2 + 2 * text.length);
        u[0] = le ? 0xff : 0xfe;
        u[1] = le ? 0xfe : 0xff;
        for (let i = 0; i < text.length; i++) new DataView(u.buffer).setUint16(2 + 2 * i, text.charCodeAt(i), le);
        // every way (reader-kit.ts), then the same as the UTF-8 file's reading
        expect(readAll(u)).toEqual(want);
      }
    },
  );

  it.each(['legacy-continued', 'legacy-one-string', 'legacy-trappy'])('%s renamed `unknown`, through Ingest: the same events and lines', (name) => {
    const bytes = fixture(`systrace_html/${name}.html`);
    const want = readHtml(bytes);
    for (const chunk of [0, 7, 4096]) {
      const cap = ingestFiles([['unknown', bytes]], chunk);
      expect(cap.files[0].kind).toBe('systrace_html');
      expect(cap.files[0].lines).toEqual(want.r.lines);
      expect(cap.trace.eventCount).toBe(want.events.length);
      const names: Record<string, number> = {};
      for (let i = 0; i < cap.trace.eventCount; i++) {
        const n = cap.trace.names.strings[cap.trace.evName.get(i)];
        names[n] = (names[n] ?? 0) + 1;
      }
      expect(names).toEqual(perName(want.events));
    }
  });
});

describe('the legacy string, unescaped as JavaScript reads it', () => {
  const page = (body: string) => `<!DOCTYPE html>\n<html><body>\n<script>\n${body}\n</script>\n</body></html>\n`;
  const ev = (ts: string, payload: string) => `    bash-12    [000] ...1  ${ts}: ${payload}`;

  it('each escape JavaScript defines, the same as the engine gives', () => {
    const lit = String.raw`"# tracer: nop\n${ev('1.000001', String.raw`tracing_mark_write: t\tb\bf\fv\vq\"a\'s\\x\x41u\u0042U\u{43}`)}\n${ev('1.000002', 'tracing_mark_write: zero\\0!')}\n"`;
    const js = `var linuxPerfData = ${lit};`;
    const got = readAll(enc.encode(page(js)));
    const want = readText(jsExtract(js));
    expect(strip(got.events)).toEqual(strip(want.events));
    expect(got.events.map((e) => e.payload)).toEqual(['tracing_mark_write: t\tb\bf\fv\vq"a\'s\\xAuBUC', 'tracing_mark_write: zero\0!']);
    expect(got.r.lines).toEqual({ total: 6, used: 6, unused: 0 });
  });

  it('a newline by \\x0a or \\u000a ends a trace line as \\n does; a continuation in the middle of a trace line joins it', () => {
    const js = `var linuxPerfData = "${ev('1.000001', 'sched_switch: a=1')}\\x0a${ev('1.000002', 'sched_switch: a=2')}\\u000a    bash-12    [000] ...1  1.000003: \\\nsched_switch: a=3\\n";`;
    const got = readAll(enc.encode(page(js)));
    expect(got.events.map((e) => [e.ts, e.payload, e.lineNo])).toEqual([
      [1.000001, 'a=1', 4],
      [1.000002, 'a=2', 4],
      // its text starts on line 4 and ends on line 5
      [1.000003, 'a=3', 4],
    ]);
    expect(readText(jsExtract(js)).events.map((e) => e.payload)).toEqual(['a=1', 'a=2', 'a=3']);
    expect(got.r.lines).toEqual({ total: 7, used: 7, unused: 0 });
  });

  it('a bad trace line that runs over two HTML lines makes both unused', () => {
    const js = `var linuxPerfData = "${ev('1.000001', 'sched_switch: a=1')}\\nnot a \\\ntrace line\\n${ev('1.000002', 'sched_switch: a=2')}\\n";`;
    const got = readAll(enc.encode(page(js)));
    expect(got.events).toHaveLength(2);
    expect(got.diags).toEqual([['line 4', 'not a trace line']]);
    expect(got.r.lines).toEqual({ total: 7, used: 5, unused: 2 });
  });

  it('malformed \\x and \\u escapes are kept as written, with a diagnostic', () => {
    const js = `var linuxPerfData = "${ev('1.000001', 'tracing_mark_write: a\\x4g b\\u12 c\\u{110000} d\\u{}')}\\n";`;
    const got = readAll(enc.encode(page(js)));
    expect(got.events.map((e) => e.payload)).toEqual(['tracing_mark_write: a\\x4g b\\u12 c\\u{110000} d\\u{}']);
    expect(got.diags).toEqual([['lines 4, 4, 4, 4', LEGACY.badEscape]]);
  });

  it("a quote ends the string only before `;` and blanks: the legacy writer left the trace's own quotes unescaped", () => {
    const html = [
      '<!DOCTYPE HTML>',
      '<html><body>',
      '  <script>',
      '  var linuxPerfData = "\\',
      `${ev('1.000001', 'tracing_mark_write: B|12|say "hi"; now')}\\n\\`,
      `${ev('1.000002', 'tracing_mark_write: "quoted"')}\\n\\`,
      '\\n";',
      '  </script>',
      '</body></html>',
    ].join('\n');
    const got = readAll(enc.encode(html));
    expect(got.events.map((e) => e.payload)).toEqual(['tracing_mark_write: B|12|say "hi"; now', 'tracing_mark_write: "quoted"']);
    // and what follows the closing `";` on its line is script again
    expect(got.r.lines).toEqual({ total: 9, used: 9, unused: 0 });
    expect(got.diags).toEqual([]);
  });

  it('a string not closed at the end of the file is read up to it', () => {
    const html = `<!DOCTYPE html>\n<script>\nvar linuxPerfData = "\\\n${ev('1.000001', 'sched_switch: a=1')}\\n\\\n${ev('1.000002', 'sched_switch: a=2')}\\n\\`;
    const got = readAll(enc.encode(html));
    expect(got.events.map((e) => e.payload)).toEqual(['a=1', 'a=2']);
    expect(got.diags).toEqual([['line 3', LEGACY.notClosedAtEnd]]);
    expect(got.r.lines).toEqual({ total: 5, used: 5, unused: 0 });
  });

  it("only `var linuxPerfData =` first on a line or after a tag opens a string: not the viewer's own code", () => {
    expect(findLinuxPerfData('  var linuxPerfData = "\\', 0)).toMatchObject({ index: 2, end: 23 });
    expect(findLinuxPerfData("<script>var linuxPerfData = 'x';", 0)).toMatchObject({ index: 8, quote: 39 });
    expect(findLinuxPerfData('    if (!r.advanceToLineMatching(/^  var linuxPerfData = "\\\\$/)) return failure;', 0)).toBeNull();
    expect(findLinuxPerfData('if(linuxPerfData){var g=new tracing.TimelineModel;g.importEvents("[]",!0,[linuxPerfData]);', 0)).toBeNull();
    expect(findLinuxPerfData('  var linuxPerfData == "x"', 0)).toBeNull();
    expect(findLinuxPerfData('  xvar linuxPerfData = "x"', 0)).toBeNull();
    // the viewer's script mentioning it is markup: the file (no trace) uses none of its lines
    const got = readHtml(enc.encode('<!DOCTYPE html>\n<script>if (!linuxPerfData) return; x = /^  var linuxPerfData = "\\\\$/;</script>\n'));
    expect(got.r.lines).toEqual({ total: 2, used: 0, unused: 2 });
    expect(got.diags[0][1]).toMatch(/no linuxPerfData string: not a systrace HTML file, nothing read/);
  });

  it('a page fragment that starts with the legacy string sniffs as systrace HTML', () => {
    expect(sniffKind(enc.encode(`  var linuxPerfData = "\\\n${ev('1.000001', 'sched_switch: a=1')}\\n";\n`))).toBe('systrace_html');
  });

  it('random pieces of the legacy shape: lines add up, chunking changes nothing, an unused line has a diagnostic', () => {
    const TOKENS = [
      '\n',
      '\n',
      ' ',
      '\\',
      '\\n',
      '\\n\\\n',
      '"',
      "'",
      '";',
      ';',
      'var linuxPerfData = "',
      '  var linuxPerfData = "\\\n',
      '<script>',
      '</script>',
      '\\x4',
      '\\x41',
      '\\u{1F6',
      '\\u0042',
      '\\u{1F600}',
      '>',
      ev('1.000001', 'tracing_mark_write: B|1|x'),
      ev('2.5', 'bprint: 0xc0: a'),
      'x',
      '#',
      '\u00e9',
    ];
    fc.assert(
      fc.property(fc.array(fc.constantFrom(...TOKENS), { maxLength: 80 }), fc.array(fc.nat(), { maxLength: 6 }), (parts, cuts) => {
        const bytes = enc.encode(parts.join(''));
        const read = (cut: number[]) => {
          const log = new DiagnosticLog('f');
          const c = collect();
          const r = feedCuts(createSystraceHtmlParser({ file: 'f', diagnostics: log }, c.sink), bytes, cut);
          return { r, events: c.events, diags: log.list() };
        };
        const a = read(cuts);
        expect(a.r.lines.used + a.r.lines.unused).toBe(a.r.lines.total);
        if (a.r.lines.unused > 0) expect(a.diags.length).toBeGreaterThan(0);
        expect(a).toEqual(read([]));
      }),
      { numRuns: 300 },
    );
  });

  it('hostile strings read in linear time: runs of backslashes, quotes, escapes cut short, markers', () => {
    const fillers = ['\\', '\\\\', '"', '";', '\\x', '\\u{', '\\u{1', '>var linuxPerfData = "', '</script>', ' ', '\\n'];
    for (const f of fillers) {
      // 1 MB: as lines of 60 000 characters (read) and as one line (too long to be read)
      const line = f.repeat(Math.ceil(60_000 / f.length)).slice(0, 60_000);
      for (const body of [Array(17).fill(line).join('\n'), f.repeat(Math.ceil(1_000_000 / f.length))]) {
        const html = `<!DOCTYPE html>\n<script>\n  var linuxPerfData = "\\\n${body}\n</script>\n`;
        const t0 = Date.now();
        const got = readHtml(enc.encode(html), 1 << 16);
        expect(got.r.lines.used + got.r.lines.unused).toBe(got.r.lines.total);
        expect(Date.now() - t0, `filler ${JSON.stringify(f)}`).toBeLessThan(20_000);
      }
    }
  }, 120_000);
});

// ---------------------------------------------------------------- the real ftrace texts, wrapped here

/** systrace-legacy.py's page: its prefix, the trace with every newline written `\n\` + newline, its suffix. */
function legacyWriterPage(text: string): { html: string; first: number } {
  const prefix = [
    '<!DOCTYPE HTML>',
    '<html>',
    '<head i18n-values="dir:textdirection;">',
    '<title>Android System Trace</title>',
    '</head>',
    '<body>',
    '  <div class="view">',
    '  </div>',
    '<!-- BEGIN TRACE -->',
    '  <script>',
    '  var linuxPerfData = "\\',
    '',
  ].join('\n');
  const suffix = '\\n";\n  </script>\n<!-- END TRACE -->\n</body>\n</html>\n';
  return { html: prefix + text.replace(/\n/g, '\\n\\\n') + suffix, first: 12 };
}

/** A writer that escapes as JSON does (a JSON string is a JavaScript string): one trace line per HTML line, continued. */
function escapedPage(text: string): { html: string; first: number } {
  const body = text
    .split('\n')
    .slice(0, linesOf(text))
    .map((l) => JSON.stringify(l + '\n').slice(1, -1) + '\\')
    .join('\n');
  return { html: `<!DOCTYPE html>\n<html>\n<body>\n<script>\n  var linuxPerfData = "\\\n${body}\n";\n</script>\n</body>\n</html>\n`, first: 6 };
}

/** The whole trace as one string on one line. */
function oneLinePage(text: string): { html: string; line: number } {
  return { html: `<!DOCTYPE html>\n<html><body>\n<script>var linuxPerfData = ${JSON.stringify(text)};</script>\n</body></html>\n`, line: 3 };
}

realDescribe('legacy systrace HTML made here from real ftrace texts', () => {
  const TEXTS = ['catapult-atrace_data.txt', 'catapult-decompressed_atrace_data.txt', 'perf-tools-tpoint_example.txt', 'perf-tools-kprobe_example.txt'];
  const texts = new Map<string, string>();
  beforeAll(() => {
    for (const f of TEXTS) texts.set(f, dec.decode(realTrace(f)));
  });
  // perf-tools-kprobe_example.txt quotes `filename=\"%s\"` (line 186): the legacy writer, which
  // escaped nothing, makes it `"` for any JavaScript reader; it is wrapped by the escaping writers only
  const RAW_OK = (f: string) => f !== 'perf-tools-kprobe_example.txt';

  for (const f of TEXTS) {
    it(`${f}: the legacy writer's page, the escaping writer's page: the events of the plain text, the lines it leaves unused`, () => {
      const text = texts.get(f)!;
      const want = readText(text);
      const shapes = [...(RAW_OK(f) ? [['legacy writer', legacyWriterPage(text)] as const] : []), ['escaping writer', escapedPage(text)] as const];
      for (const [what, { html, first }] of shapes) {
        const bytes = enc.encode(html);
        const got = readAll(bytes);
        expect(strip(got.events), what).toEqual(strip(want.events));
        expect(strip2(got.records), what).toEqual(strip2(want.records));
        expect(got.events.map((e) => e.lineNo)).toEqual(want.events.map((e) => e.lineNo + first - 1));
        // each trace line on its own HTML line: the same lines unused, by the same diagnostics moved to the page's lines
        expect(got.r).toEqual({
          lines: { total: linesOf(html), used: linesOf(html) - want.r.lines.unused, unused: want.r.lines.unused },
          tracer: want.r.tracer,
          cpus: want.r.cpus,
        });
        expect(got.diags.map(([, m]) => m)).toEqual(want.diags.map(([, m]) => m));
        if (what === 'legacy writer') {
          // catapult reads the same page back to the same text
          const c = catapultExtract(html);
          expect(c.first).toBe(first);
          expect(c.lines.join('\n')).toBe(text.endsWith('\n') ? text : text + '\n');
        } else expect(jsExtract(html.slice(html.indexOf('var linuxPerfData'), html.indexOf('</script>')))).toBe(text.endsWith('\n') ? text : text + '\n');
      }
      // the ftrace texts of Android: every event line of the kernel's shape is an event
      if (f.startsWith('catapult')) expect(want.events).toHaveLength(kernelEventLines(text));
    });
  }

  it('catapult atrace_data as one string on a line: the events of the plain text, on that line', () => {
    const text = texts.get('catapult-atrace_data.txt')!;
    const { html, line } = oneLinePage(text);
    const got = readAll(enc.encode(html));
    const want = readText(text);
    expect(strip(got.events)).toEqual(strip(want.events));
    expect(got.events).toHaveLength(kernelEventLines(text));
    expect(got.events).toHaveLength(116);
    expect(got.events.every((e) => e.lineNo === line)).toBe(true);
    expect(got.r.lines).toEqual({ total: 4, used: 4, unused: 0 });
  });

  it('perf-tools tpoint_example as one string on a line: its prose makes that one line unused', () => {
    const text = texts.get('perf-tools-tpoint_example.txt')!;
    const got = readAll(enc.encode(oneLinePage(text).html));
    const want = readText(text);
    expect(want.r.lines.unused).toBeGreaterThan(0);
    expect(strip(got.events)).toEqual(strip(want.events));
    expect(got.r.lines).toEqual({ total: 4, used: 3, unused: 1 });
  });

  it('a one-line string too long to be read: no events, and the page uses none of its lines', () => {
    const text = texts.get('catapult-decompressed_atrace_data.txt')!;
    const got = readAll(enc.encode(oneLinePage(text).html));
    expect(got.events).toEqual([]);
    expect(got.r.lines).toEqual({ total: 4, used: 0, unused: 4 });
    expect(got.diags.map(([w, m]) => [w, m.replace(/ \(.*/, '')])).toEqual([
      ['line 3', TOO_LONG],
      ['file', 'no <script class="trace-data"> block and no linuxPerfData string: not a systrace HTML file, nothing read'],
    ]);
  });

  it('through Ingest, renamed `unknown`, in chunks: the events per name of the plain text', () => {
    for (const f of TEXTS.filter(RAW_OK)) {
      const text = texts.get(f)!;
      const { html } = legacyWriterPage(text);
      const plain = ingestFiles([['trace.txt', text]], 0);
      const cap = ingestFiles([['unknown', html]], 4096);
      expect(cap.files[0].kind).toBe('systrace_html');
      expect(cap.trace.eventCount).toBe(plain.trace.eventCount);
      expect(cap.trace.recordCount).toBe(plain.trace.recordCount);
      const names = (c: typeof cap) => {
        const m: Record<string, number> = {};
        for (let i = 0; i < c.trace.eventCount; i++) {
          const n = c.trace.names.strings[c.trace.evName.get(i)];
          m[n] = (m[n] ?? 0) + 1;
        }
        return m;
      };
      expect(names(cap)).toEqual(names(plain));
      expect(cap.files[0].lines!.unused).toBe(plain.files[0].lines!.unused);
    }
  });
});
