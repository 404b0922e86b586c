import { SmallInts } from '../base/growable.ts';
import { StringTable } from '../base/string-table.ts';
import type { TraceColumns } from '../capture/trace-columns.ts';
import { fieldInteger, payloadFields } from '../formats/payload-fields.ts';
import { textInteger } from '../capture/event-filter.ts';

/** One event's payload fields, as a filter may name them: numeric where any of its events holds a number there (as the filter reads one: textInteger, 64 bits). */
export interface EventFields {
  event: string;
  fields: { name: string; numeric: boolean }[];
}

/**
 * A field's values over the events of one name, in their order, as narrow as they come:
 * - `int`: decimals that print back as themselves (`64`, `-3`; not `002`), in 31 bits: SmallInts
 *   (1, 2 or 4 bytes);
 * - `hex`: `0x` numbers that print back as themselves (`0xffff88808db9cae2`): 8 bytes;
 * - `text`: anything else, an id into the columns' string table: SmallInts.
 * A value of another kind turns the column to text (every value so far as it printed). Rows where
 * the event lacks the field are listed in `absent` (a payload's fields are fixed by its format:
 * rare).
 */
interface Column {
  kind: 'int' | 'hex' | 'text';
  /** a present value has set the kind (absent rows before it are zeros) */
  decided: boolean;
  ints: SmallInts | null;
  hex: BigUint64Array | null;
  /** rows filled so far (the column's length) */
  rows: number;
  absent: number[];
}

/** One event name's fields: a column each, `rows` long (that name's events). */
interface NameTable {
  rows: number;
  columns: Map<string, Column>;
}

const INT_MAX = 2 ** 31 - 1;

/** `v` as an int it prints back as, or null. */
function asInt(v: string): number | null {
  const n = fieldInteger(v);
  if (n !== n || n > INT_MAX || n < -INT_MAX || (n === 0 && v !== '0')) return null;
  return String(n) === v ? n : null;
}

/** `v` as a 64-bit hex it prints back as (`0x` + lowercase digits, no leading zeros), or null. */
function asHex(v: string): bigint | null {
  const n = v.length;
  if (n < 3 || n > 18 || v.charCodeAt(0) !== 48 || v.charCodeAt(1) !== 120) return null;
  if (n > 3 && v.charCodeAt(2) === 48) return null;
  for (let i = 2; i < n; i++) {
    const c = v.charCodeAt(i);
    if (!((c >= 48 && c <= 57) || (c >= 97 && c <= 102))) return null;
  }
  return BigInt(v);
}

/**
 * The payload fields of a capture's events kept as typed columns, per event name (issue 35,
 * "fields kept in the page"): numbers as integers, text as string-table ids, no payload string
 * kept. Built from a reading with details (the payloads), which can then be dropped; answers a
 * field's numbers per event (a weight), its printed text per event (a group), and each event's
 * fields (completion). Every value prints back exactly as the trace printed it.
 */
export class FieldColumns {
  readonly strings = new StringTable();
  /** events and stack records of the reading it was built from (to check it lines up with a capture) */
  readonly events: number;
  readonly records: number;
  private readonly tables = new Map<number, NameTable>();
  /** per event, its name's id (the reading's own evName column) */
  private readonly evName: SmallInts;
  private readonly names: readonly string[];
  /** the most fields kept per event name */
  private readonly perName: number;
  /** values of fields past `perName` of their event name (not kept), and the first few such fields */
  private skippedValues = 0;
  private readonly skippedFirst: string[] = [];

  private constructor(t: TraceColumns, perName: number) {
    this.perName = perName;
    this.events = t.evTs.length;
    this.records = t.recordCount;
    this.evName = t.evName;
    this.names = t.names.strings;
  }

  /** The columns of a reading with details (`LoadOptions.details`); none when it has no payloads. */
  static build(t: TraceColumns, perName = 256): FieldColumns {
    const f = new FieldColumns(t, perName);
    const det = t.details;
    if (!det) return f;
    const n = Math.min(det.length, f.events);
    // each name's events counted first: its columns are made at their size, no slack
    const count = new Map<number, number>();
    for (let e = 0; e < n; e++) {
      const id = t.evName.get(e);
      count.set(id, (count.get(id) ?? 0) + 1);
    }
    for (const [id, rows] of count) f.tables.set(id, { rows, columns: new Map() });
    const filled = new Map<number, number>();
    for (let e = 0; e < n; e++) {
      const id = t.evName.get(e);
      const table = f.tables.get(id)!;
      const row = filled.get(id) ?? 0;
      filled.set(id, row + 1);
      payloadFields(det.payload[e], (k, v) => {
        let c = table.columns.get(k);
        if (!c) {
          // a bounded number of fields a name: a payload of invented keys cannot make a column each
          if (table.columns.size >= f.perName) return void f.skip(id, k);
          table.columns.set(k, (c = { kind: 'int', decided: false, ints: null, hex: null, rows: 0, absent: [] }));
        }
        // a key printed twice in one payload: the first value, as the filter and the weights read it
        if (c.rows > row) return;
        f.fill(c, row, table.rows);
        f.put(c, v, table.rows);
      });
    }
    // rows past a name's last event with the field: absent
    for (const table of f.tables.values()) for (const c of table.columns.values()) f.fill(c, table.rows, table.rows);
    return f;
  }

  /** Marks rows [c.rows, to) absent. */
  private fill(c: Column, to: number, size: number): void {
    while (c.rows < to) {
      c.absent.push(c.rows);
      this.store(c, c.rows, null, size);
      c.rows++;
    }
  }

  /** Appends `v` (as printed) to column `c`, turning it to text when `v` is not of its kind. */
  private put(c: Column, v: string, size: number): void {
    const row = c.rows;
    if (!c.decided) {
      // the first value present decides the kind; the absent rows before it are redone in it
      c.decided = true;
      const kind = asInt(v) !== null ? 'int' : asHex(v) !== null ? 'hex' : 'text';
      if (kind === 'hex') c.ints = null;
      if (kind === 'text') this.toText(c, size);
      c.kind = kind;
    }
    if (c.kind === 'int' && asInt(v) === null) this.toText(c, size);
    if (c.kind === 'hex' && asHex(v) === null) this.toText(c, size);
    this.store(c, row, v, size);
    c.rows = row + 1;
  }

  /** Writes row `row` of `c` (null: absent, a 0). */
  private store(c: Column, row: number, v: string | null, size: number): void {
    if (c.kind === 'hex') {
      c.hex ??= new BigUint64Array(size);
      c.hex[row] = v === null ? 0n : asHex(v)!;
      return;
    }
    c.ints ??= new SmallInts(size);
    const x = v === null ? (c.kind === 'text' ? -1 : 0) : c.kind === 'int' ? asInt(v)! : this.strings.intern(v);
    if (row === c.ints.length) c.ints.push(x);
    else c.ints.set(row, x);
  }

  /** Turns a column to text ids: each value so far as it printed. */
  private toText(c: Column, size: number): void {
    const texts: (string | null)[] = [];
    const absent = new Set(c.absent);
    for (let r = 0; r < c.rows; r++) texts.push(absent.has(r) ? null : this.printed(c, r));
    c.kind = 'text';
    c.hex = null;
    c.ints = new SmallInts(size);
    for (let r = 0; r < c.rows; r++) c.ints.push(texts[r] === null ? -1 : this.strings.intern(texts[r]!));
  }

  /** Row `r`'s value as the trace printed it (the row present). */
  private printed(c: Column, r: number): string {
    if (c.kind === 'hex') return '0x' + c.hex![r].toString(16);
    const x = c.ints!.get(r);
    return c.kind === 'int' ? String(x) : this.strings.strings[x];
  }

  /** Visits each event's value of `field` as printed (null: the event lacks it), in event order. */
  private each(field: string, visit: (e: number, c: Column | undefined, row: number, present: boolean) => void): void {
    const rowOf = new Map<number, number>();
    const absentAt = new Map<Column, Set<number>>();
    for (let e = 0; e < this.events; e++) {
      const id = this.evName.get(e);
      const row = rowOf.get(id) ?? 0;
      rowOf.set(id, row + 1);
      const c = this.tables.get(id)?.columns.get(field);
      if (!c) {
        visit(e, undefined, row, false);
        continue;
      }
      let absent = absentAt.get(c);
      if (!absent) absentAt.set(c, (absent = new Set(c.absent)));
      visit(e, c, row, !absent.has(row));
    }
  }

  /** Per event the field's value as a number a double holds exactly (payload-fields.ts fieldInteger), NaN where it has none. */
  numbers(field: string): Float64Array {
    const out = new Float64Array(this.events).fill(NaN);
    this.each(field, (e, c, row, present) => {
      if (!c || !present) return;
      out[e] = c.kind === 'int' ? c.ints!.get(row) : fieldInteger(this.printed(c, row));
    });
    return out;
  }

  /** Per event the field's text as printed, as an index into `names` (-1: the event lacks it). */
  texts(field: string): { of: Int32Array; names: string[] } {
    const of = new Int32Array(this.events).fill(-1);
    const names: string[] = [];
    const index = new Map<string, number>();
    this.each(field, (e, c, row, present) => {
      if (!c || !present) return;
      const s = this.printed(c, row);
      let g = index.get(s);
      if (g === undefined) (index.set(s, (g = names.length)), names.push(s));
      of[e] = g;
    });
    return { of, names };
  }

  /** Each event name's fields, sorted by name, numeric where a value of it is a number (int or hex columns, or text that reads as one). */
  fields(): EventFields[] {
    return [...this.tables]
      .map(([id, t]) => ({
        event: this.names[id],
        fields: [...t.columns].map(([name, c]) => ({ name, numeric: c.kind !== 'text' || this.textHasNumber(c) })),
      }))
      .sort((a, b) => (a.event < b.event ? -1 : a.event > b.event ? 1 : 0));
  }

  /**
   * The keys a weight can be: those with a number a double holds exactly (fieldInteger) in at
   * least one event, with how many events hold one there, the most common first, at most `limit`.
   */
  numericFields(limit = 200): { name: string; events: number }[] {
    const seen = new Map<string, number>();
    for (const t of this.tables.values()) {
      for (const [name, c] of t.columns) {
        const absent = new Set(c.absent);
        let events = 0;
        if (c.kind === 'int') events = c.rows - absent.size;
        else {
          const numeric = new Map<number, boolean>();
          for (let r = 0; r < c.rows; r++) {
            if (absent.has(r)) continue;
            if (c.kind === 'hex') events += c.hex![r] < 2n ** 52n ? 1 : 0;
            else {
              const x = c.ints!.get(r);
              let yes = numeric.get(x);
              if (yes === undefined) numeric.set(x, (yes = fieldInteger(this.strings.strings[x]) === fieldInteger(this.strings.strings[x])));
              if (yes) events++;
            }
          }
        }
        if (events > 0) seen.set(name, (seen.get(name) ?? 0) + events);
      }
    }
    return [...seen]
      .map(([name, events]) => ({ name, events }))
      .sort((a, b) => b.events - a.events || (a.name < b.name ? -1 : 1))
      .slice(0, limit);
  }

  /** whether a value of a text column reads as a number to the filter (event-filter.ts textInteger), each distinct text tried once */
  private textHasNumber(c: Column): boolean {
    const tried = new Set<number>();
    for (let r = 0; r < c.rows; r++) {
      const x = c.ints!.get(r);
      if (x < 0 || tried.has(x)) continue;
      tried.add(x);
      if (textInteger(this.strings.strings[x]) !== undefined) return true;
    }
    return false;
  }

  /** Values of fields not kept, past the first `perName` of an event name (a payload of invented keys): how many, and the first few fields as `EVENT: KEY`. */
  skipped(): { values: number; first: string[] } {
    return { values: this.skippedValues, first: this.skippedFirst.slice() };
  }

  private skip(id: number, key: string): void {
    this.skippedValues++;
    const named = `${this.names[id]}: ${key}`;
    if (this.skippedFirst.length < 5 && !this.skippedFirst.includes(named)) this.skippedFirst.push(named);
  }

  /** Bytes the columns hold (typed arrays; the string table's strings at 2 bytes a character). */
  get byteLength(): number {
    let b = 0;
    for (const t of this.tables.values()) for (const c of t.columns.values()) b += (c.ints?.byteLength ?? 0) + (c.hex?.byteLength ?? 0) + c.absent.length * 8;
    for (const s of this.strings.strings) b += 2 * s.length;
    return b;
  }
}
