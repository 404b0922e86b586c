import type { Symbolizer } from '../formats/symbolizer.ts';
import { addressOf, baseFunction, functionOfField, siteOfField, splitNoted } from './event-fields.ts';
import { FrameKind } from './frame-table.ts';
import type { StackTable } from './stack-table.ts';
import { type TraceColumns } from './trace-columns.ts';
import { RecordStatus } from './trace-columns-data.ts';

/**
 * v4/v7 ids the trace's own fields contradict (issue 36, DESIGN 5.5): an `unverified` id whose
 * event names a function (its `call_site=`, `ip=`, or the function tracer's `FUNC <-PARENT`,
 * noted as the trace was read: trace-columns `evidRec`) that the stack it resolves to lacks is
 * made `contradicted`: the slot held another stack when the id was written. A raw address is
 * named through the capture's kallsyms (`symbolizer`), and skipped without them; a stack with a
 * raw-address frame is not judged (that frame may be the function). One pass over the noted
 * records; each stack's functions made a Set once, each noted name resolved once.
 * Returns how many were contradicted.
 */
/**
 * How deep in a stack (leaf first) a `call_site=` may sit: the leaf and the allocator's own frames
 * (kmem_cache_alloc, __kmalloc, __do_kmalloc_node, kmalloc_trace and the like) come before it.
 */
export const CALL_SITE_FRAMES = 6;

export function contradictIds(trace: TraceColumns, stacks: StackTable, symbolizer: Symbolizer | null): number {
  const status = trace.recStatus.writable();
  return scan(trace, stacks, symbolizer, RecordStatus.Unverified, (r) => (status[r] = RecordStatus.Contradicted));
}

/**
 * The same rule held against the stacks the kernel wrote in full: records whose event's fields
 * name a call site or function their own stack lacks. On a real kernel's trace it should find
 * none (the rule's false alarms); symbolic fields only (no kallsyms asked).
 */
export function fullStackContradictions(trace: TraceColumns, stacks: StackTable): number[] {
  const out: number[] = [];
  scan(trace, stacks, null, RecordStatus.Full, (r) => out.push(r));
  return out;
}

function scan(trace: TraceColumns, stacks: StackTable, symbolizer: Symbolizer | null, judged: number, hit: (record: number) => void): number {
  const recs = trace.evidRec.raw();
  if (recs.length === 0) return 0;
  const status = trace.recStatus.raw();
  const as = trace.evidA.raw();
  const bs = trace.evidB.raw();
  const recStack = trace.recStack.raw();
  const names = trace.evidNames.strings;
  const frames = stacks.frames;
  /**
   * per noted name id: what the stack must hold, '' when it cannot be named. A `call_site=` with
   * an offset is a return address into the allocator's caller, as the stack's frames print theirs:
   * the stack must hold it among its first CALL_SITE_FRAMES frames (`N:name+0xoff`), the
   * allocator's own frames below it; an `ip=` with an offset anywhere (`S:`); else the function
   */
  const fnOf = new Map<number, string>();
  const nameOf = (id: number): string => {
    let f = fnOf.get(id);
    if (f === undefined) {
      const [field, raw] = splitNoted(names[id]);
      const ip = addressOf(raw);
      // a raw address is not judged: named through kallsyms, a trace.dat's call_site (a return
      // address, or the simulator's function start) did not line up with the dump's frames, and
      // every id of a simulated trace.dat read as contradicted, the right ones too
      void symbolizer;
      const v = ip === null ? raw : null;
      const site = v === null || field === '' ? null : siteOfField(v);
      f = site !== null ? (field === 'call_site' ? 'N:' : 'S:') + site : ((v === null ? null : functionOfField(v)) ?? '');
      fnOf.set(id, f);
    }
    return f;
  };
  /** per stack: its functions (as named and without clone suffixes), null when a frame is a raw address */
  const fnsOf = new Map<number, Set<string> | null>();
  const functionsOf = (stack: number): Set<string> | null => {
    let s = fnsOf.get(stack);
    if (s === undefined) {
      s = new Set();
      let depth = 0;
      for (let n = stack; n > 0; n = stacks.parent(n), depth++) {
        const fr = stacks.frame(n);
        if (frames.kindOf(fr) === FrameKind.Address) {
          s = null;
          break;
        }
        const name = frames.functionName(frames.functionOf(fr));
        s.add(name);
        s.add(baseFunction(name));
        const off = frames.offsetOf(fr);
        if (Number.isSafeInteger(off)) {
          const site = `${name}+0x${off.toString(16)}`;
          s.add('S:' + site);
          if (depth < CALL_SITE_FRAMES) s.add('N:' + site);
        }
      }
      if (s !== null && s.size === 0) s = null;
      fnsOf.set(stack, s);
    }
    return s;
  };
  const holds = (fns: Set<string>, fn: string) => fns.has(fn) || (fn.charCodeAt(1) !== 58 /* a site's ':' */ && fns.has(baseFunction(fn)));
  let n = 0;
  for (let k = 0; k < recs.length; k++) {
    const r = recs[k];
    if (status[r] !== judged) continue;
    const fns = functionsOf(recStack[r]);
    if (fns === null) continue;
    const a = nameOf(as[k]);
    if (a === '') continue;
    if (holds(fns, a)) continue;
    if (bs[k] >= 0) {
      const b = nameOf(bs[k]);
      if (b === '' || holds(fns, b)) continue;
    }
    hit(r);
    n++;
  }
  return n;
}
