import { SQL_CANCELLED, type SqlResult, type SqlTableIpc } from './sql-api.ts';
import type { DuckEngine, StartProgress } from './sql-duckdb.ts';

export type { StartProgress };

/**
 * The page's side of DuckDB-WASM. `start` imports the engine module (and with it the DuckDB
 * bundle) only when asked: the first page load fetches none of it. The client keeps what it
 * needs to rebuild the database (where the tables come from, the views over them), because
 * Cancel may have to end the DuckDB worker: it first asks DuckDB to interrupt the query
 * (`cancelSent`), and if the query has not stopped within `graceMs` it terminates the worker,
 * starts a new one and puts the tables and views back in.
 */
export class SqlClient {
  private engine: DuckEngine | null = null;
  private starting: Promise<DuckEngine> | null = null;
  private tables: (() => Promise<SqlTableIpc[]>) | null = null;
  private views = new Map<string, string>();
  private job: { done: Promise<unknown>; cancelled: boolean; abort: (e: Error) => void } | null = null;

  constructor(
    private readonly onProgress: (p: StartProgress) => void = () => {},
    private readonly graceMs = 1500,
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

  /** Starts DuckDB once (later calls wait for the same start). */
  start(): Promise<DuckEngine> {
    if (this.engine) return Promise.resolve(this.engine);
    this.starting ??= (async () => {
      try {
        const { DuckEngine } = await import('./sql-duckdb.ts');
        const engine = await DuckEngine.start(this.onProgress);
        this.engine = engine;
        return engine;
      } finally {
        this.starting = null;
      }
    })();
    return this.starting;
  }

  /** Loads the tables `source` gives (replacing those of the same name) and keeps `source` for a restart. */
  async setTables(source: () => Promise<SqlTableIpc[]>): Promise<SqlTableIpc[]> {
    this.tables = source;
    const engine = await this.start();
    const tables = await source();
    const shapes = tables.map((t) => ({ ...t, ipc: new Uint8Array(0) }));
    await engine.load(tables);
    for (const sql of this.views.values()) await engine.exec(sql);
    return shapes;
  }

  /** Creates or replaces a view (`CREATE OR REPLACE VIEW name AS ...`), kept for a restart. */
  async setView(name: string, sql: string): Promise<void> {
    this.views.set(name, sql);
    const engine = await this.start();
    await engine.exec(sql);
  }

  /** Runs one query; rejects with DuckDB's message, or SQL_CANCELLED after `cancel()`. */
  async run(sql: string, cap: number): Promise<SqlResult> {
    if (this.job) throw new Error('a query is running');
    const engine = await this.start();
    let abort: (e: Error) => void = () => {};
    const aborted = new Promise<never>((_r, reject) => (abort = reject));
    const work = engine.run(sql, cap);
    const job = { done: work.catch(() => undefined), cancelled: false, abort };
    this.job = job;
    try {
      return await Promise.race([work, aborted]);
    } catch (e) {
      if (job.cancelled) throw new Error(SQL_CANCELLED);
      throw e;
    } finally {
      if (this.job === job) this.job = null;
    }
  }

  /** Stops the running query: DuckDB's interrupt, else (after `graceMs`) a fresh worker with the tables put back. */
  async cancel(): Promise<'interrupted' | 'restarted' | 'idle'> {
    const job = this.job;
    const engine = this.engine;
    if (!job || !engine) return 'idle';
    job.cancelled = true;
    await engine.cancel().catch(() => false);
    const stopped = await Promise.race([job.done.then(() => true), new Promise<false>((r) => setTimeout(() => r(false), this.graceMs))]);
    if (stopped) return 'interrupted';
    // DuckDB did not stop in time: end its worker and start over
    job.abort(new Error(SQL_CANCELLED));
    this.engine = null;
    await engine.terminate().catch(() => undefined);
    const fresh = await this.start();
    if (this.tables) await fresh.load(await this.tables());
    for (const sql of this.views.values()) await fresh.exec(sql);
    return 'restarted';
  }

  /** Ends DuckDB's worker. */
  async close(): Promise<void> {
    const engine = this.engine;
    this.engine = null;
    await engine?.terminate();
  }
}
