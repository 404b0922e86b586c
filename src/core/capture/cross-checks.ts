/**
 * What one file says that another contradicts, checked when a capture is finished (issue 34, 17):
 * two symbol files that disagree (an address named differently, a name at another address), and
 * dump slots that no table of the map holds (past the stat's table, or past the largest map's).
 * Each is one diagnostic per file and reason (grouped by the log), with its first places; all
 * linear in the files' sizes.
 */
import type { DiagnosticLog } from '../formats/diagnostics.ts';
import type { SymbolFile } from '../formats/kallsyms.ts';
import type { ParsedDump, ParsedStat } from '../formats/types.ts';

/** The largest map (bits 18) has a table of 2^19 slots: no slot id of any map reaches past it. */
export const LARGEST_TABLE = 1 << 19;

const hex = (hi: number, lo: number) => '0x' + (hi === 0 ? lo.toString(16) : hi.toString(16) + lo.toString(16).padStart(8, '0'));

/**
 * `other` against `used` (the symbol file that symbolizes): addresses both hold with no name in
 * common, and names each holds once at different addresses. One diagnostic each on `log`
 * (`other`'s), counting them and naming the first. Both are sorted by address: one merge.
 */
export function compareSymbolFiles(used: SymbolFile, other: SymbolFile, log: DiagnosticLog): void {
  if (used.allZero || other.allZero) return;
  const a = used;
  const b = other;
  let i = 0;
  let j = 0;
  let addrDiffer = 0;
  let firstAddr = '';
  while (i < a.names.length && j < b.names.length) {
    const c = a.hi[i] - b.hi[j] || a.lo[i] - b.lo[j];
    if (c < 0) i++;
    else if (c > 0) j++;
    else {
      // the names at this address in each file (aliases share an address)
      let ie = i;
      while (ie < a.names.length && a.hi[ie] === a.hi[i] && a.lo[ie] === a.lo[i]) ie++;
      let je = j;
      while (je < b.names.length && b.hi[je] === b.hi[j] && b.lo[je] === b.lo[j]) je++;
      const names = new Set(a.names.slice(i, ie));
      let common = false;
      for (let k = j; k < je && !common; k++) common = names.has(b.names[k]);
      if (!common) {
        if (addrDiffer === 0) firstAddr = `${hex(a.hi[i], a.lo[i])} is \`${b.names[j]}\` here, \`${a.names[i]}\` in ${used.file}`;
        addrDiffer++;
      }
      i = ie;
      j = je;
    }
  }
  if (addrDiffer > 0)
    log.forFile(
      `disagrees with ${used.file} (the symbol file used): ${addrDiffer} address(es) named otherwise, first ${firstAddr}; ${used.file}'s names are used`,
    );

  // names each file holds once (a static function may repeat within one file)
  const once = (f: SymbolFile) => {
    const m = new Map<string, number>();
    for (let k = 0; k < f.names.length; k++) m.set(f.names[k], m.has(f.names[k]) ? -1 : k);
    return m;
  };
  const inA = once(a);
  const inB = once(b);
  let nameDiffer = 0;
  let firstName = '';
  for (const [name, kb] of inB) {
    if (kb < 0) continue;
    const ka = inA.get(name);
    if (ka === undefined || ka < 0) continue;
    if (a.hi[ka] !== b.hi[kb] || a.lo[ka] !== b.lo[kb]) {
      if (nameDiffer === 0) firstName = `\`${name}\` at ${hex(b.hi[kb], b.lo[kb])} here, ${hex(a.hi[ka], a.lo[ka])} in ${used.file}`;
      nameDiffer++;
    }
  }
  if (nameDiffer > 0)
    log.forFile(
      `disagrees with ${used.file} (the symbol file used): ${nameDiffer} name(s) at other addresses, first ${firstName} (another boot, or KASLR?); ${used.file}'s addresses are used`,
    );
}

/**
 * The table the stats say the map has: a v7 `table_size`, else twice a `capacity` (the table is
 * twice the element pool); the largest any stat gives, null without one.
 */
export function statTable(stats: readonly ParsedStat[]): { size: number; what: string } | null {
  let best: { size: number; what: string } | null = null;
  for (const s of stats) {
    const t =
      s.tableSize !== null && s.tableSize > 0
        ? { size: s.tableSize, what: `${s.file}'s table_size ${s.tableSize}` }
        : s.capacity !== null && s.capacity > 0
          ? { size: 2 * s.capacity, what: `the ${2 * s.capacity}-slot table of ${s.file}'s capacity ${s.capacity}` }
          : null;
    if (t && (!best || t.size > best.size)) best = t;
  }
  return best;
}

/** Records of `dump` whose slot is past `table` (else past the largest map's table): one grouped diagnostic at each (its first places kept). */
export function slotsPastTable(dump: ParsedDump, table: { size: number; what: string } | null, log: DiagnosticLog): number {
  const limit = table ? Math.min(table.size, LARGEST_TABLE) : LARGEST_TABLE;
  const what = table && table.size <= LARGEST_TABLE ? table.what : `the largest map's table (${LARGEST_TABLE} slots, bits 18)`;
  const msg = `slot past ${what}: no table of that map holds it (kept as read)`;
  const bin = dump.format === 'stack_map_bin';
  let n = 0;
  const c = dump.columns;
  if (c) {
    for (let r = 0; r < c.count; r++) {
      if (c.slot[r] >= limit) {
        n++;
        if (bin) log.atOffset(c.where[r], msg);
        else log.atLine(c.where[r], msg);
      }
    }
    return n;
  }
  for (const rec of dump.records) {
    if (rec.slot >= limit) {
      n++;
      if (bin) log.atOffset(rec.where, msg);
      else log.atLine(rec.where, msg);
    }
  }
  return n;
}
