// A query result as text: an aligned table made as rows arrive, and CSV lines.
import { escapeControls } from '../core/base/control-chars.ts';
import type { Cell, Column, QueryResult } from './sql-query.ts';

const text = (c: Cell) => escapeControls(c === null ? 'NULL' : typeof c === 'object' ? JSON.stringify(c) : String(c));

const NUMERIC_TYPE = /^(U?(TINY|SMALL|BIG|HUGE)?INT(EGER)?|FLOAT|DOUBLE|REAL|DECIMAL(\(.*\))?|VARINT|BIGNUM)$/;
/** a column of numbers (right-aligned), by its type: a BIGINT beyond 2^53, a string cell, still is one */
export const isNumericType = (type: string) => NUMERIC_TYPE.test(type);

/** rows whose widths set the columns' (the first ones), and the widest a column is padded to */
export const WIDTH_SAMPLE = 1000;
export const MAX_WIDTH = 80;

/**
 * An aligned text table made as rows arrive: numbers to the right, the rest to the left, a rule
 * under the header, control characters escaped. The widths come from the header and the first
 * WIDTH_SAMPLE rows (held until then), at most MAX_WIDTH: a longer cell is printed whole and
 * pushes its row's later cells right, rather than padding every row to its length.
 */
export class TableWriter {
  private width: number[] = [];
  private readonly numeric: boolean[];
  private readonly names: string[];
  private held: string[][] | null = [];
  private written = 0;

  constructor(cols: Column[]) {
    this.names = cols.map((c) => escapeControls(c.name));
    this.numeric = cols.map((c) => isNumericType(c.type));
  }

  private line(row: string[]): string {
    const w = this.width;
    let s = '';
    for (let k = 0; k < row.length; k++) {
      if (k > 0) s += '  ';
      s += this.numeric[k] ? row[k].padStart(w[k]) : row[k].padEnd(w[k]);
    }
    return s.trimEnd();
  }

  /** the widths from what is held; the header and the held rows */
  private flush(): string {
    const held = this.held!;
    this.held = null;
    this.width = this.names.map((n) => Math.min(MAX_WIDTH, n.length));
    for (const row of held) for (let k = 0; k < row.length; k++) if (row[k].length > this.width[k]) this.width[k] = Math.min(MAX_WIDTH, row[k].length);
    let out = this.line(this.names) + '\n' + this.width.map((w) => '-'.repeat(w)).join('  ') + '\n';
    for (const row of held) out += this.line(row) + '\n';
    return out;
  }

  /** the text to print for these rows (nothing while the first WIDTH_SAMPLE are held) */
  rows(rows: Cell[][]): string {
    let out = '';
    for (const r of rows) {
      const cells = r.map(text);
      this.written++;
      if (this.held) {
        this.held.push(cells);
        if (this.held.length >= WIDTH_SAMPLE) out += this.flush();
      } else out += this.line(cells) + '\n';
    }
    return out;
  }

  /** the rest: what is held, and the footer with the rows of the result and how many were not printed */
  end(total: number): string {
    const shown = this.written;
    const head = this.held ? this.flush() : '';
    const rows = (n: number) => `${n} row${n === 1 ? '' : 's'}`;
    return head + (shown < total ? `(${shown} of ${rows(total)} shown, ${total - shown} cut: --limit N or --all prints more)` : `(${rows(total)})`) + '\n';
  }
}

/** One CSV line (RFC 4180): a field with a comma, a quote or a line break quoted, its quotes doubled; null empty. */
export function csvLine(cells: readonly Cell[]): string {
  return (
    cells
      .map((c) => {
        if (c === null) return '';
        const v = typeof c === 'string' ? c : typeof c === 'object' ? JSON.stringify(c) : String(c);
        return /[",\r\n]/.test(v) ? `"${v.replaceAll('"', '""')}"` : v;
      })
      .join(',') + '\r\n'
  );
}

/** An aligned text table of a whole result, every row. */
export function formatTable(r: QueryResult): string {
  const t = new TableWriter(r.columns);
  return t.rows(r.rows) + t.end(r.rows.length);
}
