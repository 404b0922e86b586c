import { SQL_CANCELLED, type SqlTableIpc } from './sql-api.ts';
import type { SqlResult } from '../core/tables/sql-result.ts';
import type { StartProgress } from './sql-duckdb.ts';

export type { StartProgress };

/** What the client needs of an engine (sql-duckdb.ts's DuckEngine; a fake in the tests). */
export interface SqlEngine {
  readonly version: string;
  readonly bundle: string;
  load(tables: SqlTableIpc[]): Promise<void>;
  exec(sql: string): Promise<void>;
  run(sql: string, cap: number): Promise<SqlResult>;
  cancel(): Promise<boolean>;
  terminate(): Promise<void>;
}

/** DuckDB-WASM, imported only when first asked for: the first page load fetches none of it. */
const duckdb = async (onProgress: (p: StartProgress) => void): Promise<SqlEngine> => {
  const { DuckEngine } = await import('./sql-duckdb.ts');
  return DuckEngine.start(onProgress);
};

/**
 * The page's side of DuckDB-WASM. `start` starts the engine once. The client keeps what it needs
 * to rebuild the database (where the tables come from, the views over them), because Cancel may
 * have to end the DuckDB worker: it first asks DuckDB to stop (`cancelSent`, and the result's
 * stream is no longer read), and if the query has not stopped within `graceMs` it terminates the
 * worker, starts a new one and puts the tables and views back in; queries asked meanwhile wait.
 */
export class SqlClient {
  private engine: SqlEngine | null = null;
  private starting: Promise<SqlEngine> | null = null;
  /** a restart after Cancel: every call waits for it */
  private restoring: Promise<unknown> = Promise.resolve();
  private tables: (() => Promise<SqlTableIpc[]>) | null = null;
  private views = new Map<string, string>();
  private job: { done: Promise<unknown>; cancelled: boolean; abort: (e: Error) => void } | null = null;

  constructor(
    private readonly onProgress: (p: StartProgress) => void = () => {},
    private readonly graceMs = 1500,
    private readonly create: (onProgress: (p: StartProgress) => void) => Promise<SqlEngine> = duckdb,
  ) {}

  get version(): string | null {
    return this.engine?.version ?? null;
  }

  get bundle(): string | null {
    return this.engine?.bundle ?? null;
  }

  get running(): boolean {
    return this.job !== null;
  }

  /** Starts the engine once (later calls wait for the same start). */
  start(): Promise<SqlEngine> {
    if (this.engine) return Promise.resolve(this.engine);
    this.starting ??= this.create(this.onProgress)
      .then((engine) => (this.engine = engine))
      .finally(() => (this.starting = null));
    return this.starting;
  }

  /** The engine once any restart is over. */
  private async ready(): Promise<SqlEngine> {
    await this.restoring;
    return this.start();
  }

  /** Loads the tables `source` gives (replacing those of the same name), keeps `source` for a restart; returns each table's name and rows. */
  async setTables(source: () => Promise<SqlTableIpc[]>): Promise<{ name: string; rows: number }[]> {
    this.tables = source;
    const engine = await this.ready();
    const tables = await source();
    const shapes = tables.map((t) => ({ name: t.name, rows: t.rows }));
    await engine.load(tables);
    for (const sql of this.views.values()) await engine.exec(sql);
    return shapes;
  }

  /** Creates or replaces a view (`CREATE OR REPLACE VIEW name AS ...`), kept for a restart. */
  async setView(name: string, sql: string): Promise<void> {
    this.views.set(name, sql);
    const engine = await this.ready();
    await engine.exec(sql);
  }

  /** Runs one query; rejects with DuckDB's message, or SQL_CANCELLED after `cancel()`. */
  async run(sql: string, cap: number): Promise<SqlResult> {
    if (this.job) throw new Error('a query is running');
    let abort: (e: Error) => void = () => {};
    const aborted = new Promise<never>((_r, reject) => (abort = reject));
    const job = { done: Promise.resolve() as Promise<unknown>, cancelled: false, abort };
    this.job = job;
    try {
      const engine = await this.ready();
      if (job.cancelled) throw new Error(SQL_CANCELLED);
      const work = engine.run(sql, cap);
      job.done = work.catch(() => undefined);
      return await Promise.race([work, aborted]);
    } catch (e) {
      if (job.cancelled) throw new Error(SQL_CANCELLED);
      throw e;
    } finally {
      if (this.job === job) this.job = null;
    }
  }

  /** Stops the running query: DuckDB's interrupt, else (after `graceMs`) a fresh engine with the tables and views put back. */
  async cancel(): Promise<'interrupted' | 'restarted' | 'idle'> {
    const job = this.job;
    const engine = this.engine;
    if (!job || !engine) return 'idle';
    job.cancelled = true;
    await engine.cancel().catch(() => false);
    const stopped = await Promise.race([job.done.then(() => true), new Promise<false>((r) => setTimeout(() => r(false), this.graceMs))]);
    if (stopped) return 'interrupted';
    // DuckDB did not stop in time: end its worker, start over, and put everything back before the next call
    job.abort(new Error(SQL_CANCELLED));
    this.engine = null;
    const restore = (async () => {
      await engine.terminate().catch(() => undefined);
      const fresh = await this.start();
      if (this.tables) await fresh.load(await this.tables());
      for (const sql of this.views.values()) await fresh.exec(sql);
    })();
    this.restoring = restore.catch(() => undefined);
    await restore;
    return 'restarted';
  }

  /** Ends the engine's worker. */
  async close(): Promise<void> {
    const engine = this.engine;
    this.engine = null;
    await engine?.terminate();
  }
}
