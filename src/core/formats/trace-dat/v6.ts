/**
 * The body of a trace.dat version 6, after the 16-byte initial header: header_page and
 * header_event, ftrace and event formats, kallsyms, printk formats, cmdlines, the CPU count,
 * then `options` and `flyrecord` (or `latency`) tagged parts, one after another.
 */
import { readSpans } from './fly.ts';
import { applyOption, emptyOptions, optionBytes, tsMap } from './options.ts';
import { cmdlines, emptyMeta, eventFormats, ftraceFormats, headerInfo, kallsyms, printkFormats } from './sections.ts';
import type { DatCpuData } from './options.ts';
import type { Pull, Rd } from './read.ts';
import type { DatBody } from './types.ts';

const ascii = new TextDecoder('latin1');

export function* readV6(rd: Rd, b: DatBody): Pull<void> {
  const { res, ctx } = b;
  const meta = emptyMeta();
  if (!(yield* headerInfo(rd, b.longSize, meta))) return;
  if (!(yield* ftraceFormats(rd, meta))) return;
  if (!(yield* eventFormats(rd, meta))) return;
  if (!(yield* kallsyms(rd, ctx, meta))) return;
  if (!(yield* printkFormats(rd, meta))) return;
  if (!(yield* cmdlines(rd, meta))) return;
  const cpus = yield* rd.u32();
  if (cpus === null) return void rd.truncated('the CPU count');
  res.cpus = cpus;
  const opts = emptyOptions();

  // options, then flyrecord (or latency: the rest is text)
  for (;;) {
    const at = rd.pos;
    const kind = yield* rd.bytes(10);
    if (!kind) return void rd.truncated('the section tag');
    const name = ascii.decode(kind).replace(/[\s\0]+$/, '');
    if (name === 'options') {
      for (;;) {
        const oat = rd.pos;
        const id = yield* rd.u16();
        if (id === null) return void rd.truncated('the options');
        if (id === 0) break;
        const sz = yield* rd.u32();
        if (sz === null) return void rd.truncated('an option');
        const data = yield* optionBytes(rd, id, sz);
        if (!data) return void rd.truncated('an option');
        applyOption(id, data, rd.little, false, opts, (m) => rd.diag(oat, m));
      }
      continue;
    }
    if (name === 'latency') return void (yield* rd.restUnused('latency trace text: not read'));
    if (name !== 'flyrecord') return void rd.diag(at, `unknown section \`${name}\``);
    break;
  }
  res.clock = opts.clock;
  if (cpus > 4096) return void rd.diag(rd.pos, `${cpus} CPUs: not read`);
  const spans: DatCpuData[] = [];
  for (let c = 0; c < cpus; c++) {
    const off = yield* rd.u64();
    const size = off === null ? null : yield* rd.u64();
    if (off === null || size === null) return void rd.truncated('the CPU data offsets');
    res.perCpu.push(0);
    spans.push({ cpu: c, offset: off, size });
  }
  const page = b.pages(meta, tsMap(opts));
  if (!(yield* readSpans({ rd, pageSize: b.pageSize, filePage: page.file, innerPage: page.inner, codec: null }, spans, Infinity))) return;
  yield* rd.restUnused('bytes after the last CPU data');
}
