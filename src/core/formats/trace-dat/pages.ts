/**
 * The ring buffer pages of a trace.dat: the page header (timestamp, commit with the
 * missed-events flags), events by their 5-bit type_len (padding, time extend, absolute time
 * stamp, data with or without a length word), each record decoded by its event format and sent
 * to the trace sink; `kernel_stack` records as full stack records, the stack map's `stack_id`
 * entries as cookie records (see stackIdField).
 */
import { addressKeyOf, type Symbolizer } from '../symbolizer.ts';
import { formatPayload, type DatEventFormat, type DatField, type PageHeader } from './format.ts';
import { bprintText } from './printk.ts';
import { contextOf, type RawFields, type TraceEvent, type TraceSink, type TraceStackRecord } from '../types.ts';

/**
 * The id field of the stack map's entry (`options/stackmap`), or null when `fmt` is not that
 * entry: an event of the ftrace system (the kernel's own entries, as `kernel_stack`) with a
 * field named `stack_cookie` (v8: `u64`, gen << 32 | slot) or `stack_id` (v7: a 4-byte id). The
 * event is found by its field, not by its name (`stack_id` in the writer) or its ID, which the
 * kernel's trace_entries.h decides; the field's size, not its name, says v7 or v8, so either
 * name is read either way. Other sizes are for the caller to report.
 */
export function stackIdField(fmt: DatEventFormat): DatField | null {
  if (fmt.system !== 'ftrace') return null;
  let id: DatField | null = null;
  for (const f of fmt.fields) {
    if (f.dataLoc || f.array > 0) continue;
    if (f.name === 'stack_cookie') return f;
    if (f.name === 'stack_id') id = f;
  }
  return id;
}

/** What the page reader needs of the file read so far. */
export interface PageContext {
  /** counters it adds to */
  res: { used: number; events: number; perCpu: number[]; lostMarkers: number };
  sink: TraceSink;
  little: boolean;
  longSize: number;
  page: PageHeader;
  formats: Map<number, DatEventFormat>;
  comms: Map<number, string>;
  symbolizer: Symbolizer | null;
  /** printk format address (lowercase hex) -> format, for bprint events */
  printk?: Map<string, string>;
  /** the timestamp the options ask for (OFFSET, TSC2NSEC), ns to ns */
  tsOf?: ((ns: number) => number) | null;
  diag(at: number, msg: string): void;
  /** `n` bytes at `at` not used, for `why` */
  unused(at: number, n: number, why: string): void;
}

/** A reader of whole pages: `p` one page of a CPU's data, `at` its file offset. */
export function createPageReader(c: PageContext): (p: Uint8Array, at: number, cpu: number) => void {
  const { res, sink, little, longSize, page, formats, comms, symbolizer, diag, unused } = c;
  const printk = c.printk ?? new Map<string, string>();
  const tsOf = c.tsOf ?? null;
  const ev: TraceEvent = { lineNo: 0, comm: '', pid: 0, tgid: null, cpu: 0, ts: 0, flags: '', name: '', payload: '' };
  /** reused for every cookie (the sink copies what it keeps, as from the text reader) */
  const cookie: TraceStackRecord = { lineNo: 0, kind: 'cookie', comm: '', pid: 0, cpu: 0, ts: 0, slot: -1, generation: null, frames: null };
  /** each format's stack id field (null: not the stack map's entry), found once */
  const idFields = new Map<DatEventFormat, DatField | null>();
  /** the record being given to the sink, for `raw` (an event filter's field reads) */
  let curFmt: DatEventFormat | null = null;
  let curRec: Uint8Array = new Uint8Array(0);
  let curView: DataView = new DataView(curRec.buffer);
  const byName = new Map<DatEventFormat, Map<string, DatField>>();
  const fieldOf = (name: string): DatField | undefined => {
    if (!curFmt) return undefined;
    let m = byName.get(curFmt);
    if (!m) {
      byName.set(curFmt, (m = new Map()));
      for (const f of curFmt.fields) if (!m.has(f.name)) m.set(f.name, f);
    }
    return m.get(name);
  };
  const rawInt = (f: DatField): bigint | undefined => {
    if (f.dataLoc || f.array > 0 || f.offset + f.size > curRec.length) return undefined;
    const v = curView;
    const o = f.offset;
    switch (f.size) {
      case 1:
        return BigInt.asUintN(64, BigInt(f.signed ? v.getInt8(o) : v.getUint8(o)));
      case 2:
        return BigInt.asUintN(64, BigInt(f.signed ? v.getInt16(o, little) : v.getUint16(o, little)));
      case 4:
        return BigInt.asUintN(64, BigInt(f.signed ? v.getInt32(o, little) : v.getUint32(o, little)));
      case 8:
        return v.getBigUint64(o, little);
    }
    return undefined;
  };
  /** libtraceevent's fields: integers as u64, char arrays as strings, a long or pointer as its function for a string compare */
  const raw: RawFields = {
    int(name) {
      const f = fieldOf(name);
      return f ? rawInt(f) : undefined;
    },
    text(name, regex) {
      const f = fieldOf(name);
      if (!f) return undefined;
      if (/^(?:const\s+)?(?:unsigned\s+)?char\b/.test(f.type) && (f.dataLoc || f.array > 0 || f.size === 0 || f.type.endsWith(']'))) {
        let from = f.offset;
        let to = f.offset + f.size;
        if (f.dataLoc) {
          if (f.size !== 4 || f.offset + 4 > curRec.length) return undefined;
          const w = curView.getUint32(f.offset, little);
          from = w & 0xffff;
          to = from + (w >>> 16);
        } else if (f.size === 0) to = curRec.length;
        if (to > curRec.length) return undefined;
        let e = from;
        while (e < to && curRec[e] !== 0) e++;
        return new TextDecoder().decode(curRec.subarray(from, e));
      }
      const x = rawInt(f);
      if (x === undefined) return undefined;
      if ((/\blong\b/.test(f.type) || f.type.includes('*')) && symbolizer) {
        const sym = symbolOf(Number(x >> 32n), Number(x & 0xffffffffn), false);
        if (sym !== null) return sym;
      }
      return regex ? '' : '0x' + x.toString(16);
    },
  };
  return readPage;

  function readPage(p: Uint8Array, at: number, cpu: number): void {
    const v = new DataView(p.buffer, p.byteOffset, p.byteLength);
    const rd32 = (o: number) => v.getUint32(o, little);
    let ts = little ? rd32(4) * 2 ** 32 + rd32(0) : rd32(0) * 2 ** 32 + rd32(4);
    const commit = page.commitSize === 8 ? (little ? rd32(page.commitOffset) : rd32(page.commitOffset + 4)) : rd32(page.commitOffset);
    const size = commit & 0x7ffffff;
    const data = page.dataOffset;
    if (commit & 0x80000000) {
      res.lostMarkers++;
      let count: number | null = null;
      if (commit & 0x40000000 && data + size + longSize <= p.length) count = rd32(little || longSize === 4 ? data + size : data + size + 4);
      sink.lost({ lineNo: at, cpu, count });
    }
    if (data + size > p.length) {
      unused(at, p.length, `CPU ${cpu}: page commit ${size} beyond the page`);
      return;
    }
    res.used += data + (p.length - data - size); // the page header and the slack after the commit
    let o = data;
    const end = data + size;
    while (o < end) {
      if (o + 4 > end) {
        unused(at + o, end - o, `CPU ${cpu}: event header cut by the page end`);
        o = end;
        break;
      }
      const w = rd32(o);
      const typeLen = little ? w & 31 : w >>> 27;
      const delta = little ? w >>> 5 : w & 0x7ffffff;
      const evAt = o;
      if (typeLen === 29) {
        // padding: a discarded event of array[0] more bytes, or (delta 0) the rest of the page
        if (delta === 0 || o + 8 > end) {
          res.used += end - o;
          o = end;
          break;
        }
        const len = rd32(o + 4);
        if (o + 4 + len > end || len < 4) {
          unused(at + o, end - o, `CPU ${cpu}: padding of ${len} bytes beyond the page`);
          o = end;
          break;
        }
        ts += delta;
        res.used += 4 + len;
        o += 4 + len;
        continue;
      }
      if (typeLen === 30 || typeLen === 31) {
        if (o + 8 > end) {
          unused(at + o, end - o, `CPU ${cpu}: time extend cut by the page end`);
          o = end;
          break;
        }
        const ext = rd32(o + 4) * 2 ** 27 + delta;
        ts = typeLen === 30 ? ts + ext : ext;
        res.used += 8;
        o += 8;
        continue;
      }
      let len: number;
      let rec: number;
      if (typeLen === 0) {
        if (o + 8 > end) {
          unused(at + o, end - o, `CPU ${cpu}: event length cut by the page end`);
          o = end;
          break;
        }
        len = rd32(o + 4) - 4;
        rec = o + 8;
      } else {
        len = typeLen * 4;
        rec = o + 4;
      }
      if (len < 0 || rec + len > end) {
        unused(at + o, end - o, `CPU ${cpu}: event of ${len} bytes beyond the page`);
        o = end;
        break;
      }
      ts += delta;
      o = rec + ((len + 3) & ~3);
      if (o > end) o = end;
      res.used += o - evAt;
      emit(p.subarray(rec, rec + len), at + evAt, cpu, ts);
    }
  }

  function emit(rec: Uint8Array, at: number, cpu: number, rawNs: number): void {
    const tsNs = tsOf ? tsOf(rawNs) : rawNs;
    if (rec.length < 8) {
      diag(at, 'event record shorter than its common fields');
      return;
    }
    const v = new DataView(rec.buffer, rec.byteOffset, rec.byteLength);
    const type = v.getUint16(0, little);
    const fmt = formats.get(type);
    const pid = v.getInt32(4, little);
    const comm = pid === 0 ? '<idle>' : (comms.get(pid) ?? '<...>');
    res.events++;
    res.perCpu[cpu]++;
    if (!fmt) {
      diag(at, `event type ${type}: no format for it in the file`);
      return;
    }
    if (fmt.name === 'kernel_stack' && fmt.system === 'ftrace') {
      sink.stackRecord({
        lineNo: at,
        kind: 'full',
        comm,
        pid,
        cpu,
        ts: tsNs / 1e9,
        slot: -1,
        generation: null,
        frames: stackFrames(fmt, rec, v),
        ctx: contextOfFlags(rec),
      });
      return;
    }
    let idField = idFields.get(fmt);
    if (idField === undefined) idFields.set(fmt, (idField = stackIdField(fmt)));
    if (idField) {
      stackId(fmt, idField, rec, v, at, cpu, tsNs / 1e9, comm, pid);
      return;
    }
    ev.lineNo = at;
    ev.comm = comm;
    ev.pid = pid;
    ev.cpu = cpu;
    ev.ts = tsNs / 1e9;
    ev.flags = flagString(rec[2], rec[3]);
    ev.name = fmt.name;
    // bprint is the ftrace system's; a `print` with the kernel's ip and buf fields is trace_marker's
    const own = fmt.name === 'bprint' && fmt.system === 'ftrace' ? bprint(fmt, rec, v) : fmt.name === 'print' ? print(fmt, rec, v) : null;
    ev.payload = own ?? formatPayload(fmt, rec, little);
    ev.system = fmt.system;
    ev.raw = raw;
    curFmt = fmt;
    curRec = rec;
    curView = v;
    sink.event(ev);
    curFmt = null;
  }

  /**
   * A stack map entry as the text reader sends `<stack_id N>` (v7, no generation) and
   * `<stack_id N gen G>` (v8: the cookie's low half the slot, its high half the generation); the
   * sink joins it to the event before it on its CPU. A field of another size, or one the record
   * does not reach, is a diagnostic at the record's byte offset `at`.
   */
  function stackId(fmt: DatEventFormat, f: DatField, rec: Uint8Array, v: DataView, at: number, cpu: number, ts: number, comm: string, pid: number): void {
    if (f.size !== 4 && f.size !== 8) {
      diag(at, `${fmt.name}: field ${f.name} of ${f.size} bytes, not 4 (a v7 stack id) or 8 (a v8 cookie): record not read`);
      return;
    }
    if (f.offset + f.size > rec.length) {
      diag(at, `${fmt.name}: record of ${rec.length} bytes, its ${f.name} (offset ${f.offset}, ${f.size} bytes) beyond it: record not read`);
      return;
    }
    let generation: number | null = null;
    // v8: the cookie's high half the generation, its low half the slot; v7: the u32 id (a slot, never negative)
    const [hi, lo] = halves(v, f.offset, f.size);
    if (f.size === 8) generation = hi;
    cookie.lineNo = at;
    cookie.comm = comm;
    cookie.pid = pid;
    cookie.cpu = cpu;
    cookie.ts = ts;
    cookie.slot = lo;
    cookie.generation = generation;
    cookie.ctx = contextOfFlags(rec);
    sink.stackRecord(cookie);
  }

  /** The high and low 32-bit halves of an unsigned field of 4 or 8 bytes at `off` (a 4-byte one's high half is 0). */
  function halves(v: DataView, off: number, size: number): [number, number] {
    if (size !== 8) return [0, v.getUint32(off, little)];
    return [v.getUint32(little ? off + 4 : off, little), v.getUint32(little ? off : off + 4, little)];
  }

  /** `ip_symbol: text` of a bprint record, its format from the saved printk formats. */
  function bprint(fmt: DatEventFormat, rec: Uint8Array, v: DataView): string | null {
    let ipF = null;
    let fmtF = null;
    let bufF = null;
    for (const f of fmt.fields) {
      if (f.name === 'ip') ipF = f;
      else if (f.name === 'fmt') fmtF = f;
      else if (f.name === 'buf') bufF = f;
    }
    if (!ipF || !fmtF || !bufF || (ipF.size !== 4 && ipF.size !== 8) || fmtF.size !== ipF.size) return null;
    if (fmtF.offset + fmtF.size > rec.length || ipF.offset + ipF.size > rec.length || bufF.offset > rec.length) return null;
    const [ih, il] = halves(v, ipF.offset, ipF.size);
    const [fh, fl] = halves(v, fmtF.offset, fmtF.size);
    const ipText = symbolOf(ih, il, false) ?? '0x' + hexOf(ih, il);
    const addr = hexOf(fh, fl);
    return bprintText(ipText, printk.get(addr), addr, rec.subarray(bufF.offset), little, ipF.size, symbolOf);
  }

  /**
   * `ip_symbol: text` of a print record (trace_marker), as the kernel prints it (`%ps: %s`, the
   * buffer up to its NUL, one trailing newline dropped), null when its fields are not those.
   */
  function print(fmt: DatEventFormat, rec: Uint8Array, v: DataView): string | null {
    let ipF = null;
    let bufF = null;
    for (const f of fmt.fields) {
      if (f.name === 'ip') ipF = f;
      else if (f.name === 'buf') bufF = f;
    }
    if (!ipF || !bufF || (ipF.size !== 4 && ipF.size !== 8) || ipF.offset + ipF.size > rec.length || bufF.offset > rec.length) return null;
    const [ih, il] = halves(v, ipF.offset, ipF.size);
    const ipText = symbolOf(ih, il, false) ?? (ih === 0 && il === 0 ? '0' : '0x' + hexOf(ih, il));
    const buf = rec.subarray(bufF.offset);
    const nul = buf.indexOf(0);
    let text = new TextDecoder().decode(nul < 0 ? buf : buf.subarray(0, nul));
    if (text.endsWith('\n')) text = text.slice(0, -1);
    return `${ipText}: ${text}`;
  }

  /** A symbol for %ps/%pf (name) or %pS/%pF (name+0xoff), null without one. */
  function symbolOf(hi: number, lo: number, withOffset: boolean): string | null {
    if (!symbolizer) return null;
    const k = symbolizer.resolve(hi, lo);
    if (k.startsWith('0x')) return null;
    if (withOffset) return k;
    const plus = k.lastIndexOf('+0x');
    return plus > 0 ? k.slice(0, plus) : k;
  }

  function stackFrames(fmt: DatEventFormat, rec: Uint8Array, v: DataView): string[] {
    const caller = fmt.fields.find((f) => f.name === 'caller');
    const sizeF = fmt.fields.find((f) => f.name === 'size');
    const frames: string[] = [];
    if (!caller) return frames;
    let n = Math.floor((rec.length - caller.offset) / longSize);
    if (sizeF && sizeF.size === 4 && sizeF.offset + 4 <= rec.length) n = Math.min(n, v.getUint32(sizeF.offset, little));
    for (let i = 0; i < n; i++) {
      const o = caller.offset + i * longSize;
      const lo = longSize === 8 ? v.getUint32(little ? o : o + 4, little) : v.getUint32(o, little);
      const hi = longSize === 8 ? v.getUint32(little ? o + 4 : o, little) : 0;
      if ((hi === 0 && lo === 0) || (lo === 0xffffffff && (longSize === 4 || hi === 0xffffffff))) break;
      frames.push(symbolizer ? symbolizer.resolveCounted(hi, lo) : addressKeyOf(hi, lo));
    }
    return frames;
  }
}

const hexOf = (hi: number, lo: number) => (hi === 0 ? lo.toString(16) : hi.toString(16) + lo.toString(16).padStart(8, '0'));

/** A record's context (types.ts contextOf) from its common_flags and common_preempt_count: an event and its stack record share them. */
const contextOfFlags = (rec: Uint8Array): number => contextOf(flagString(rec[2], rec[3]), 0, 4);

/** The irqs-off / need-resched / hardirq-softirq / preempt-depth columns, as ftrace prints them. */
function flagString(flags: number, preempt: number): string {
  const irq = flags & 0x01 ? 'd' : flags & 0x02 ? 'X' : '.';
  const nr = flags & 0x04 ? 'N' : '.';
  // TRACE_FLAG_NMI 0x40, HARDIRQ 0x08, SOFTIRQ 0x10, lettered as libtraceevent's latency format does
  const nmi = flags & 0x40;
  const hs = nmi && flags & 0x08 ? 'Z' : nmi ? 'z' : flags & 0x08 && flags & 0x10 ? 'H' : flags & 0x08 ? 'h' : flags & 0x10 ? 's' : '.';
  const pc = (preempt & 0xf) === 0 ? '.' : (preempt & 0xf).toString(16);
  return irq + nr + hs + pc;
}
