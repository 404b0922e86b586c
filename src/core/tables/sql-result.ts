// A SQL answer as the page shows it: its columns, and cells of which a long text comes cut.

export interface SqlColumn {
  name: string;
  /** DuckDB's Arrow type, as text (Int64, Utf8, Float64, ...) */
  type: string;
  /** a number type: shown right-aligned */
  numeric: boolean;
}

/** characters of a text cell the table shows: a longer one comes cut (SqlCutCell) */
export const CELL_CHARS = 200;

/**
 * A text cell longer than CELL_CHARS: its first characters and its length for the table, the
 * whole value only on asking (Copy, Save), so the page's DOM never holds it (a 100M-character
 * cell crashed the tab, issue 18.10).
 */
export interface SqlCutCell {
  cut: string;
  /** the whole value's length, in UTF-16 code units as String.length counts */
  chars: number;
  whole(): string;
}

/** A cell: an integer beyond 2^53 comes as its decimal text; lists and structs as JSON; a long text cut. */
export type SqlCell = string | number | boolean | null | SqlCutCell;

export const isCut = (v: SqlCell): v is SqlCutCell => typeof v === 'object' && v !== null;

/** `s` as a cell: itself up to CELL_CHARS characters, else cut there (never inside a surrogate pair). */
export function textCell(s: string): string | SqlCutCell {
  if (s.length <= CELL_CHARS) return s;
  let end = CELL_CHARS;
  const last = s.charCodeAt(end - 1);
  if (last >= 0xd800 && last <= 0xdbff) end--;
  return { cut: s.slice(0, end), chars: s.length, whole: () => s };
}

export interface SqlResult {
  columns: SqlColumn[];
  /** the first rows, at most the cap asked for */
  rows: SqlCell[][];
  /** rows in the whole result */
  total: number;
  elapsedMs: number;
}
