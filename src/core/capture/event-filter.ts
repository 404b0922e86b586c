/**
 * trace-cmd's event filter (`trace-cmd report -F`): filters parsed by event-filter-parse.ts (the
 * grammar is there), evaluated per event in time linear in the filter and the event's text.
 *
 * What trace-cmd 3.x does, found by running it (src/cli/filter.test.ts holds it to that):
 * every comparison is of unsigned 64-bit integers (a signed field sign-extended, `-1` the largest
 * value: `node < 0` is never true); `FIELD & 4` (and `| ^ + - * / %`) is a term of its own, true when
 * the result is not 0, joined by `&&` and `||` as a comparison is but not compared further; a
 * string (quoted `"` or `'`) goes with `==` `!=` `=~` `!~` only, `=~` a basic regular expression,
 * case-insensitive and unanchored, `==` exact; a numeric field against a string is its function
 * name when it is a long or pointer with a symbol, else `0x%llx` for `==`/`!=` and the empty string
 * for `=~`/`!~`; a field the event lacks makes its comparison false (so `!` of it true).
 */
import type { RE2JS } from 're2js';
import { payloadFieldsNamed } from '../formats/payload-fields.ts';
import type { RawFields } from '../formats/types.ts';
import { FilterError, MASK, Op, parseFilter, type FilterNode, type ParsedFilter } from './event-filter-parse.ts';

/** What the filter reads of an event. */
export interface FilterEvent {
  name: string;
  /** the event's system (trace.dat); undefined when the input does not say (text traces): a `SYSTEM/EVENT` pattern then checks the event's name only */
  system?: string;
  comm: string;
  pid: number;
  cpu: number;
  tgid: number | null;
  /** the payload as printed (`key=value ...`): text traces' fields */
  payload: string;
  /** trace.dat: the record's raw fields, preferred to the payload's */
  raw?: RawFields;
}

/** Several filters (repeated `--filter`, as several `-F`), ORed: an event matches when one of them does. */
export class EventFilter {
  private readonly all: ParsedFilter[];
  private readonly fields = new Map<string, string>();

  /** the payload fields the filters name (the others are not read from a payload) */
  private readonly named: string[];

  private constructor(all: ParsedFilter[]) {
    this.all = all;
    const named = new Set<string>();
    for (const f of all) if (f.expr) fieldsIn(f.expr, named);
    this.named = [...named];
  }

  /** Parses each filter; throws FilterError (with the filter's text before its message when there are several). */
  static parse(texts: readonly string[]): EventFilter {
    return new EventFilter(
      texts.map((t) => {
        try {
          return parseFilter(t);
        } catch (e) {
          if (e instanceof FilterError) e.text = t;
          throw e;
        }
      }),
    );
  }

  /** per event name (and system), which of the filters its name passes: RE2 asked once per name, not per event */
  private readonly nameHits = new Map<string, boolean[]>();

  private hitsOf(name: string, system: string | undefined): boolean[] {
    const key = system === undefined ? name : `${system}/${name}`;
    let hits = this.nameHits.get(key);
    if (!hits) {
      const e = { name, system } as FilterEvent;
      hits = this.all.map((f) => f.events.some((p) => eventMatches(p, e)));
      // names come from the input: a bounded cache, asked again past it
      if (this.nameHits.size < 4096) this.nameHits.set(key, hits);
    }
    return hits;
  }

  /** Whether an event of this name (text traces: no system) can match at all, before its payload is looked at. */
  selectsName(name: string, system?: string): boolean {
    return this.hitsOf(name, system).some(Boolean);
  }

  matches(e: FilterEvent): boolean {
    let fieldsOf: string | null = null;
    const hits = this.hitsOf(e.name, e.system);
    for (let k = 0; k < this.all.length; k++) {
      const f = this.all[k];
      if (!hits[k]) continue;
      if (!f.expr) return true;
      if (f.needsFields && !e.raw && fieldsOf !== e.payload) {
        this.fields.clear();
        payloadFieldsNamed(e.payload, this.named, (k, v) => {
          if (!this.fields.has(k)) this.fields.set(k, v);
        });
        fieldsOf = e.payload;
      }
      if (evaluate(f.expr, e, this.fields)) return true;
    }
    return false;
  }
}

/** The payload fields `n` reads (not COMM, CPU, TGID or common_pid, which are the event's own). */
function fieldsIn(n: FilterNode, out: Set<string>): void {
  switch (n.k) {
    case 'and':
    case 'or':
      fieldsIn(n.a, out);
      fieldsIn(n.b, out);
      return;
    case 'not':
      fieldsIn(n.a, out);
      return;
    case 'num':
    case 'str':
      if (n.field !== 'COMM' && n.field !== 'CPU' && n.field !== 'TGID' && n.field !== 'common_pid') out.add(n.field);
  }
}

function eventMatches(p: { system: RE2JS | null; name: RE2JS }, e: FilterEvent): boolean {
  if (p.system) return p.name.matches(e.name) && (e.system === undefined || p.system.matches(e.system));
  return p.name.matches(e.name) || (e.system !== undefined && p.name.matches(e.system));
}

function evaluate(n: FilterNode, e: FilterEvent, fields: Map<string, string>): boolean {
  switch (n.k) {
    case 'and':
      return evaluate(n.a, e, fields) && evaluate(n.b, e, fields);
    case 'or':
      return evaluate(n.a, e, fields) || evaluate(n.b, e, fields);
    case 'not':
      return !evaluate(n.a, e, fields);
    case 'num': {
      const v = intOf(n.field, e, fields);
      if (v === undefined) return false;
      return compare(n.op, v, n.value);
    }
    case 'str': {
      const regex = n.op === Op.Match || n.op === Op.NoMatch;
      const s = textOf(n.field, e, fields, regex);
      if (s === undefined) return false;
      if (n.op === Op.Eq) return s === n.value;
      if (n.op === Op.Ne) return s !== n.value;
      const hit = n.re!.test(s);
      return n.op === Op.Match ? hit : !hit;
    }
  }
}

function compare(op: Op, a: bigint, b: bigint): boolean {
  switch (op) {
    case Op.Eq:
      return a === b;
    case Op.Ne:
      return a !== b;
    case Op.Ge:
      return a >= b;
    case Op.Le:
      return a <= b;
    case Op.Gt:
      return a > b;
    case Op.Lt:
      return a < b;
    case Op.And:
      return (a & b) !== 0n;
    case Op.Or:
      return (a | b) !== 0n;
    case Op.Xor:
      return (a ^ b) !== 0n;
    case Op.Add:
      return ((a + b) & MASK) !== 0n;
    case Op.Sub:
      return ((a - b) & MASK) !== 0n;
    case Op.Mul:
      return ((a * b) & MASK) !== 0n;
    case Op.Div:
      return a / b !== 0n;
    case Op.Mod:
      return a % b !== 0n;
    default:
      return false;
  }
}

const u64 = (n: number): bigint => BigInt.asUintN(64, BigInt(n));

function intOf(field: string, e: FilterEvent, fields: Map<string, string>): bigint | undefined {
  if (field === 'CPU') return u64(e.cpu);
  if (field === 'COMM') return undefined;
  if (field === 'TGID') return e.tgid === null || e.tgid < 0 ? undefined : u64(e.tgid);
  if (field === 'common_pid') return u64(e.pid);
  if (e.raw) return e.raw.int(field);
  const t = fields.get(field);
  return t === undefined ? undefined : textInteger(t);
}

function textOf(field: string, e: FilterEvent, fields: Map<string, string>, regex: boolean): string | undefined {
  if (field === 'COMM') return e.comm;
  if (field === 'CPU' || field === 'TGID' || field === 'common_pid') {
    const v = intOf(field, e, fields);
    return v === undefined ? undefined : regex ? '' : '0x' + v.toString(16);
  }
  if (e.raw) return e.raw.text(field, regex);
  return fields.get(field);
}

/** A text payload's value as a u64: decimal (a leading `-` two's complement) or `0x` hex, whole; undefined otherwise. */
export function textInteger(t: string): bigint | undefined {
  const n = t.length;
  if (n === 0 || n > 40) return undefined;
  let i = 0;
  const neg = t.charCodeAt(0) === 45;
  if (neg) i++;
  let hex = false;
  if (n - i > 2 && t.charCodeAt(i) === 48 && (t.charCodeAt(i + 1) | 32) === 120) {
    hex = true;
    i += 2;
  }
  if (i >= n) return undefined;
  for (let k = i; k < n; k++) {
    const c = t.charCodeAt(k);
    const ok = (c >= 48 && c <= 57) || (hex && (c | 32) >= 97 && (c | 32) <= 102);
    if (!ok) return undefined;
  }
  const v = BigInt(hex ? '0x' + t.slice(i) : t.slice(i));
  return BigInt.asUintN(64, neg ? -v : v);
}
