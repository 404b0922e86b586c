/** The types the SQL pane's engine (sql-duckdb.ts), its client (sql-client.ts) and the state share; a result's cells are core/tables/sql-result.ts. */

/** One table as Arrow IPC stream bytes (core/tables/arrow.ts), as the ingest worker hands it over. */
export interface SqlTableIpc {
  name: string;
  ipc: Uint8Array;
  rows: number;
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
