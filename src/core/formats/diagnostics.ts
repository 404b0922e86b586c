/** A thing a reader did not understand, located by file and line or byte offset. */
export interface Diagnostic {
  file: string;
  /** "line 12", "lines 12, 40, 41 (+7 more)", "offset 0x40", or "file" */
  where: string;
  message: string;
  /** how many occurrences this diagnostic stands for (grouped by reason) */
  count: number;
}

const FIRST_FEW = 5;

/** One reason's occurrences in a file: the first few places and how many in all (what a log keeps). */
export interface DiagnosticGroup {
  message: string;
  unit: 'line' | 'offset' | 'file';
  places: number[];
  count: number;
}
type Group = DiagnosticGroup;

/**
 * Collects diagnostics for one file. Occurrences that share a reason are grouped, keeping
 * a count and the first few places, so a file with a million bad lines stays readable.
 */
export class DiagnosticLog {
  private groups = new Map<string, Group>();
  constructor(readonly file: string) {}

  atLine(line: number, message: string): void {
    this.add('line', line, message);
  }
  atOffset(offset: number, message: string): void {
    this.add('offset', offset, message);
  }
  forFile(message: string): void {
    this.add('file', 0, message);
  }

  private add(unit: Group['unit'], place: number, message: string): void {
    const key = unit + '\u0000' + message;
    let g = this.groups.get(key);
    if (!g) {
      g = { message, unit, places: [], count: 0 };
      this.groups.set(key, g);
    }
    g.count++;
    if (g.places.length < FIRST_FEW) g.places.push(place);
  }

  get size(): number {
    return this.groups.size;
  }

  /** What the log holds, as plain data (a copy: it can be posted to another thread). */
  exportGroups(): DiagnosticGroup[] {
    return [...this.groups.values()].map((g) => ({ ...g, places: g.places.slice() }));
  }

  /**
   * Adds the groups of a log of a later piece of the same file, read apart (split-trace.ts):
   * its lines are shifted by `lineShift` and its offsets by `offsetShift`, so the log ends as if
   * one reader had read both pieces in order.
   */
  absorb(groups: readonly DiagnosticGroup[], lineShift: number, offsetShift: number): void {
    for (const o of groups) {
      const shift = o.unit === 'line' ? lineShift : o.unit === 'offset' ? offsetShift : 0;
      const key = o.unit + '\u0000' + o.message;
      let g = this.groups.get(key);
      if (!g) {
        g = { message: o.message, unit: o.unit, places: [], count: 0 };
        this.groups.set(key, g);
      }
      g.count += o.count;
      for (const p of o.places) if (g.places.length < FIRST_FEW) g.places.push(p + shift);
    }
  }

  list(): Diagnostic[] {
    return [...this.groups.values()].map((g) => ({
      file: this.file,
      where: describePlaces(g),
      message: g.message,
      count: g.count,
    }));
  }
}

function describePlaces(g: Group): string {
  if (g.unit === 'file') return 'file';
  const fmt = g.unit === 'line' ? (n: number) => String(n) : (n: number) => '0x' + n.toString(16);
  const noun = g.unit === 'line' ? 'line' : 'offset';
  const more = g.count - g.places.length;
  const list = g.places.map(fmt).join(', ') + (more > 0 ? ` (+${more} more)` : '');
  return (g.count > 1 ? noun + 's ' : noun + ' ') + list;
}
