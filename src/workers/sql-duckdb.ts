import * as duckdb from '@duckdb/duckdb-wasm';
// served from the app's own origin (dist/assets), never from a CDN
import mvpWasm from '@duckdb/duckdb-wasm/dist/duckdb-mvp.wasm?url';
import mvpWorker from '@duckdb/duckdb-wasm/dist/duckdb-browser-mvp.worker.js?url';
import ehWasm from '@duckdb/duckdb-wasm/dist/duckdb-eh.wasm?url';
import ehWorker from '@duckdb/duckdb-wasm/dist/duckdb-browser-eh.worker.js?url';
import { duckMessage, SQL_CANCELLED, type SqlTableIpc } from './sql-api.ts';
import { textCell, type SqlCell, type SqlColumn, type SqlResult } from '../core/tables/sql-result.ts';

/**
 * DuckDB-WASM in its own worker. This module is imported only when the SQL pane opens
 * (sql-client.ts imports it dynamically), so the first page load fetches no DuckDB file.
 * Extensions are never installed or autoloaded (they would come from extensions.duckdb.org),
 * and external access is off: nothing leaves the origin.
 */

const BUNDLES: duckdb.DuckDBBundles = {
  mvp: { mainModule: mvpWasm, mainWorker: mvpWorker },
  eh: { mainModule: ehWasm, mainWorker: ehWorker },
};

export interface StartProgress {
  /** bytes of the wasm fetched so far, of total (0 while unknown) */
  loaded: number;
  total: number;
}

/** typeIds of apache-arrow's Type enum that hold numbers (Int, Float, Decimal) */
const NUMERIC = new Set([2, 3, 7]);

/** a value as the table holds it: text longer than CELL_CHARS cut (its whole kept for Copy, never in the DOM) */
const cell = (v: unknown, scale = 0): SqlCell => {
  if (v === null || v === undefined) return null;
  if (typeof v === 'number' || typeof v === 'boolean') return v;
  if (typeof v === 'string') return textCell(v);
  if (typeof v === 'bigint') return Number.isSafeInteger(Number(v)) ? Number(v) : v.toString();
  if (v instanceof Date) return v.toISOString();
  // apache-arrow's big numbers (HUGEINT, sum() of a BIGINT, and DECIMAL) print their unscaled digits: the column's scale places the point
  const text = typeof (v as { toString?: unknown }).toString === 'function' ? String(v) : '';
  if (/^-?\d{1,40}$/.test(text)) {
    if (scale === 0) return Number.isSafeInteger(Number(text)) ? Number(text) : text;
    const neg = text.startsWith('-');
    const digits = (neg ? text.slice(1) : text).padStart(scale + 1, '0');
    return (neg ? '-' : '') + digits.slice(0, -scale) + '.' + digits.slice(-scale);
  }
  try {
    const json = (v as { toJSON?: () => unknown }).toJSON ? (v as { toJSON: () => unknown }).toJSON() : v;
    return textCell(JSON.stringify(json, (_k, x) => (typeof x === 'bigint' ? x.toString() : x)));
  } catch {
    return textCell(String(v));
  }
};

export class DuckEngine {
  private running: Promise<unknown> | null = null;
  /** Cancel was asked while the result streams: the loop stops at the next batch */
  private stopAsked = false;

  private constructor(
    private readonly db: duckdb.AsyncDuckDB,
    private readonly conn: duckdb.AsyncDuckDBConnection,
    private readonly worker: Worker,
    readonly version: string,
    readonly bundle: string,
  ) {}

  /** Starts the worker, fetches and compiles the wasm (progress as it downloads), opens an in-memory database. */
  static async start(onProgress?: (p: StartProgress) => void): Promise<DuckEngine> {
    const bundle = await duckdb.selectBundle(BUNDLES);
    const worker = new Worker(bundle.mainWorker!, { name: 'duckdb' });
    const db = new duckdb.AsyncDuckDB(new duckdb.VoidLogger(), worker);
    try {
      await db.instantiate(bundle.mainModule, bundle.pthreadWorker, (p) => onProgress?.({ loaded: p.bytesLoaded, total: p.bytesTotal }));
      await db.open({ path: ':memory:', query: { castBigIntToDouble: false } });
      const conn = await db.connect();
      // nothing leaves the origin: no extension installed or autoloaded (extensions.duckdb.org), no
      // file or URL read (LOAD, INSTALL, read_csv('https://...') fail with DuckDB's message), and
      // the settings locked so a query cannot turn them back on
      await conn.query(
        'SET autoinstall_known_extensions = false; SET autoload_known_extensions = false; SET enable_external_access = false; SET lock_configuration = true',
      );
      const version = await db.getVersion();
      return new DuckEngine(db, conn, worker, version, bundle.mainModule === ehWasm ? 'eh' : 'mvp');
    } catch (e) {
      await db.terminate().catch(() => undefined);
      worker.terminate();
      throw e;
    }
  }

  /** Puts each table in (replacing one of the same name), from its Arrow IPC stream bytes. */
  async load(tables: SqlTableIpc[]): Promise<void> {
    for (const t of tables) {
      await this.conn.query(`DROP TABLE IF EXISTS "${t.name}"`);
      await this.conn.insertArrowFromIPCStream(t.ipc, { name: t.name, create: true });
    }
  }

  /** Runs statements whose results are not shown (views). */
  async exec(sql: string): Promise<void> {
    await this.conn.query(sql);
  }

  /**
   * Runs one query, streaming its result: the first `cap` rows are kept, the rest only counted,
   * so a huge result costs no memory. `cancel()` stops it.
   */
  async run(sql: string, cap: number): Promise<SqlResult> {
    const t0 = performance.now();
    this.stopAsked = false;
    const job = (async () => {
      const reader = await this.conn.send(sql, true);
      let columns: SqlColumn[] | null = null;
      const rows: SqlCell[][] = [];
      let total = 0;
      for await (const batch of reader) {
        // the result streams batch by batch: a Cancel stops it here (the next query closes it in DuckDB)
        if (this.stopAsked) throw new Error(SQL_CANCELLED);
        if (!columns) columns = batch.schema.fields.map((f) => ({ name: f.name, type: String(f.type), numeric: NUMERIC.has(f.typeId) }));
        const n = batch.numRows;
        const take = Math.min(n, Math.max(0, cap - rows.length));
        if (take > 0) {
          const cols = batch.schema.fields.map((_f, j) => batch.getChildAt(j));
          const scales = batch.schema.fields.map((f) => (f.typeId === 7 ? ((f.type as { scale?: number }).scale ?? 0) : 0));
          for (let i = 0; i < take; i++) rows.push(cols.map((c, j) => cell(c?.get(i), scales[j])));
        }
        total += n;
      }
      columns ??= reader.schema ? reader.schema.fields.map((f) => ({ name: f.name, type: String(f.type), numeric: NUMERIC.has(f.typeId) })) : [];
      return { columns, rows, total, elapsedMs: performance.now() - t0 };
    })();
    this.running = job;
    try {
      return await job;
    } catch (e) {
      throw new Error(this.stopAsked ? SQL_CANCELLED : duckMessage(e));
    } finally {
      if (this.running === job) this.running = null;
    }
  }

  /** Asks DuckDB to stop the query sent last (true when one was pending), and stops reading its result. */
  cancel(): Promise<boolean> {
    this.stopAsked = true;
    return this.conn.cancelSent();
  }

  /** Ends the worker (and any query in it) for good. */
  async terminate(): Promise<void> {
    try {
      await this.db.terminate();
    } finally {
      this.worker.terminate();
    }
  }
}
