/** The types the SQL pane's engine (sql-duckdb.ts), its client (sql-client.ts) and the state share. */

/** One table as Arrow IPC stream bytes (core/tables/arrow.ts), as the ingest worker hands it over. */
export interface SqlTableIpc {
  name: string;
  ipc: Uint8Array;
  rows: number;
}

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

/** The message a query stopped by Cancel fails with. */
export const SQL_CANCELLED = 'query cancelled';

/**
 * DuckDB's message for a failed query, in its own words. Some errors (the parser's) come as
 * JSON (`{"exception_type":"Parser","exception_message":"syntax error at or near ..."}`): those
 * read as DuckDB prints them, `Parser Error: syntax error at or near ...`.
 */
export function duckMessage(e: unknown): string {
  const raw = e instanceof Error ? e.message : String(e);
  if (!raw.trimStart().startsWith('{')) return raw;
  try {
    const j = JSON.parse(raw) as { exception_type?: unknown; exception_message?: unknown };
    if (typeof j.exception_message !== 'string') return raw;
    return typeof j.exception_type === 'string' && j.exception_type ? `${j.exception_type} Error: ${j.exception_message}` : j.exception_message;
  } catch {
    return raw;
  }
}
