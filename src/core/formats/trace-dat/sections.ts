/**
 * The metadata parts of a trace.dat, the same in version 6 (one after another after the header)
 * and version 7 (each in its own section, maybe compressed): header_page and header_event, the
 * ftrace and event formats, kallsyms, printk formats and saved cmdlines. Each reads from an `Rd`
 * (the file, a section window of it, or a decompressed block) into `DatMeta`.
 */
import { createKallsymsParser } from '../kallsyms.ts';
import { Symbolizer } from '../symbolizer.ts';
import { MAX_FIELDS, parseEventFormat, parseHeaderPage, type DatEventFormat, type PageHeader } from './format.ts';
import { parsePrintkFormats } from './printk.ts';
import type { Pull, Rd } from './read.ts';
import type { ParseContext } from '../types.ts';

/** What the metadata parts say. */
export interface DatMeta {
  /** the page header layout (null until header_page is read) */
  page: PageHeader | null;
  formats: Map<number, DatEventFormat>;
  symbolizer: Symbolizer | null;
  /** printk format address (lowercase hex, no 0x) -> format string */
  printk: Map<string, string>;
  comms: Map<number, string>;
}

export function emptyMeta(): DatMeta {
  return { page: null, formats: new Map(), symbolizer: null, printk: new Map(), comms: new Map() };
}

function* tag(rd: Rd, want: string): Pull<boolean> {
  const at = rd.pos;
  const got = yield* rd.cstr(32);
  if (got === want) return true;
  rd.diag(at, got === null ? `trace.dat ends before \`${want}\`` : `expected \`${want}\`, found \`${got.slice(0, 32)}\``);
  return false;
}

/** `header_page` and `header_event`, each a tag, a u64 size and its text. */
export function* headerInfo(rd: Rd, longSize: number, meta: DatMeta): Pull<boolean> {
  if (!(yield* tag(rd, 'header_page'))) return false;
  let n = yield* rd.u64();
  if (n === null) return (void rd.truncated('header_page'), false);
  const hp = yield* rd.text(n, 'header_page');
  if (hp === null) return false;
  meta.page = parseHeaderPage(hp, longSize);
  if (!(yield* tag(rd, 'header_event'))) return false;
  n = yield* rd.u64();
  if (n === null || (yield* rd.text(n, 'header_event')) === null) return (void rd.truncated('header_event'), false);
  return true;
}

function addFormat(rd: Rd, meta: DatMeta, t: string, system: string, at: number): void {
  const f = parseEventFormat(t, system);
  if (typeof f === 'string') return void rd.diag(at, f);
  if (f.cut) rd.diag(at, `event format ${f.system}/${f.name}: ${MAX_FIELDS + f.cut} fields, the first ${MAX_FIELDS} kept: its records show those`);
  const was = meta.formats.get(f.id);
  // trace-cmd report decodes the id's records by the later format too
  if (was)
    rd.diag(
      at,
      `event format ${f.system}/${f.name}: ID ${f.id} is also ${was.system}/${was.name}'s: its records are read as ${f.name}, the later one (as trace-cmd does), not as ${was.name}`,
    );
  meta.formats.set(f.id, f);
}

/** u32 count, then that many u64-sized ftrace format files. */
export function* ftraceFormats(rd: Rd, meta: DatMeta): Pull<boolean> {
  const count = yield* rd.u32();
  if (count === null) return (void rd.truncated('the ftrace format count'), false);
  for (let i = 0; i < count; i++) {
    const at = rd.pos;
    const sz = yield* rd.u64();
    const t = sz === null ? null : yield* rd.text(sz, 'an ftrace format');
    if (t === null) return (void rd.truncated('the ftrace formats'), false);
    addFormat(rd, meta, t, 'ftrace', at);
  }
  return true;
}

/** u32 system count; per system its name, u32 count, then u64-sized format files. */
export function* eventFormats(rd: Rd, meta: DatMeta): Pull<boolean> {
  const systems = yield* rd.u32();
  if (systems === null) return (void rd.truncated('the event system count'), false);
  for (let s = 0; s < systems; s++) {
    const sys = yield* rd.cstr(256);
    const k = sys === null ? null : yield* rd.u32();
    if (sys === null || k === null) return (void rd.truncated('the event systems'), false);
    for (let i = 0; i < k; i++) {
      const at = rd.pos;
      const sz = yield* rd.u64();
      const t = sz === null ? null : yield* rd.text(sz, 'an event format');
      if (t === null) return (void rd.truncated('the event formats'), false);
      addFormat(rd, meta, t, sys, at);
    }
  }
  return true;
}

/** u32 size, then /proc/kallsyms text, fed to the kallsyms reader piece by piece. */
export function* kallsyms(rd: Rd, ctx: ParseContext, meta: DatMeta): Pull<boolean> {
  const ksize = yield* rd.u32();
  if (ksize === null) return (void rd.truncated('the kallsyms size'), false);
  const kparser = createKallsymsParser({ file: ctx.file, diagnostics: ctx.diagnostics });
  let got = 0;
  const at = rd.pos;
  const ok = yield* rd.pieces(ksize, (b) => {
    got += b.length;
    kparser.push(b);
  });
  const syms = kparser.end();
  if (!ok) {
    rd.src.unused(at, got, 'kallsyms: cut short');
    rd.truncated('kallsyms');
    return false;
  }
  rd.src.use(ksize);
  if (syms.addrs.length > 0) meta.symbolizer = new Symbolizer(syms);
  return true;
}

/** u32 size, then the printk formats (`0xADDR : "format"` lines). */
export function* printkFormats(rd: Rd, meta: DatMeta): Pull<boolean> {
  const at = rd.pos;
  const psize = yield* rd.u32();
  const t = psize === null ? null : yield* rd.text(psize, 'printk formats');
  if (t === null) return (void rd.truncated('the printk formats'), false);
  const bad = parsePrintkFormats(t, meta.printk);
  if (bad > 0) rd.diag(at, `printk formats: ${bad} line(s) not \`0xADDR : "format"\``);
  return true;
}

/** u64 size, then saved_cmdlines (`PID COMM` lines). */
export function* cmdlines(rd: Rd, meta: DatMeta): Pull<boolean> {
  const csize = yield* rd.u64();
  const cmd = csize === null ? null : yield* rd.text(csize, 'saved cmdlines');
  if (cmd === null) return (void rd.truncated('the saved cmdlines'), false);
  for (const line of cmd.split('\n')) {
    const m = /^(\d+) (.*)$/.exec(line);
    if (m) meta.comms.set(+m[1], m[2]);
  }
  return true;
}
