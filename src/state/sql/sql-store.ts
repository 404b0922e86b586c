import { create } from 'zustand';
import type { Selection } from '../../core/query/api.ts';
import { SQL_CANCELLED } from '../../workers/sql-api.ts';
import type { SqlResult } from '../../core/tables/sql-result.ts';
import { SqlClient, type StartProgress } from '../../workers/sql-client.ts';
import { useLoadStore } from '../load/load-store.ts';
import { ingestWorker } from '../load/load-worker.ts';
import { SELECTION_VIEWS, selectionViewSql } from './sql-selection.ts';
import { stackIds, useViewStore } from '../view/view-store.ts';

export { SELECTION_VIEWS, selectionViewSql };

/** rows of a result kept for the table (the rest are counted) */
export const RESULT_CAP = 1000;

export type SqlStatus = 'closed' | 'starting' | 'tables' | 'ready' | 'error';

export interface SqlState {
  status: SqlStatus;
  /** the status line: what is loading, or what is loaded */
  line: string;
  /** the wasm download while DuckDB starts */
  download: StartProgress | null;
  /** DuckDB's version and bundle once started */
  engine: { version: string; bundle: string } | null;
  /** rows per table loaded, for the list */
  rows: Record<string, number>;
  /** the capture whose tables are in DuckDB (load store's captureId) */
  loadedCapture: number;
  /** milliseconds from Open to the tables being in (the first query can run) */
  openMs: number | null;
  text: string;
  running: boolean;
  result: SqlResult | null;
  /** the query the result is of */
  ran: string | null;
  error: string | null;
  /** the `selection` view follows the panes' selection, and a query over it is run again when it changes */
  follow: boolean;
  /** the selection the `selection` view holds */
  viewSelection: Selection | null;
  open(): Promise<void>;
  setText(text: string): void;
  run(text?: string): Promise<void>;
  cancel(): Promise<void>;
  setFollow(follow: boolean): void;
  /** selects the stack with this stack_hash in every pane (a result cell's click) */
  selectStack(hash: string): Promise<void>;
  /** one line about the last stack_hash clicked that the capture lacks */
  notice: string | null;
}

const mb = (b: number) => `${(b / 1e6).toFixed(1)} MB`;

const selectionOf = (): Selection => {
  const v = useViewStore.getState();
  return { range: v.range, generation: v.generation, cpus: v.cpus };
};

const sameSelection = (a: Selection | null, b: Selection) => JSON.stringify(a) === JSON.stringify(b);

const DEFAULT_QUERY = 'SELECT event, count(*) AS events FROM selection GROUP BY event ORDER BY events DESC';

let client: SqlClient | null = null;
const sql = (): SqlClient =>
  (client ??= new SqlClient((p: StartProgress) => {
    if (useSqlStore.getState().status === 'starting')
      useSqlStore.setState({ download: p, line: p.total > 0 ? `Loading DuckDB: ${mb(p.loaded)} of ${mb(p.total)}` : `Loading DuckDB: ${mb(p.loaded)}` });
  }));

const readyLine = (rows: Record<string, number>, extra = '') =>
  `DuckDB ${sql().version ?? ''}: ${Object.keys(rows).length} tables, ${rows.events ?? 0} events${extra}`;

/** the tables being put in: one load at a time; a capture that opens meanwhile is loaded after it */
let loadingTables: Promise<void> | null = null;

/** Puts the open capture's tables in (replacing the last capture's) and the selection view over them. */
async function loadTables(): Promise<void> {
  const capture = useLoadStore.getState().captureId;
  useSqlStore.setState({ status: 'tables', line: 'Building the tables…' });
  try {
    const tables = await sql().setTables(() => ingestWorker().tables());
    const selection = selectionOf();
    for (const v of SELECTION_VIEWS) await sql().setView(v.view, selectionViewSql(selection, v.view, v.table));
    const rows = Object.fromEntries(tables.map((t) => [t.name, t.rows]));
    useSqlStore.setState({
      status: 'ready',
      rows,
      loadedCapture: capture,
      viewSelection: selection,
      engine: { version: sql().version ?? '', bundle: sql().bundle ?? '' },
      line: readyLine(rows),
    });
    // a query asked for while the tables went in, else the selection, which may have moved meanwhile
    if (!runQueued()) void followSelection();
  } catch (e) {
    useSqlStore.setState({ status: 'error', line: `The tables could not be loaded: ${(e as Error).message}` });
  }
}

function reloadTables(): Promise<void> {
  loadingTables ??= loadTables().finally(() => {
    loadingTables = null;
    // another capture opened while these were built
    const s = useSqlStore.getState();
    if (s.status === 'ready' && s.loadedCapture !== useLoadStore.getState().captureId && useLoadStore.getState().overview) void reloadTables();
  });
  return loadingTables;
}

export const useSqlStore = create<SqlState>((set, get) => ({
  status: 'closed',
  line: '',
  download: null,
  engine: null,
  rows: {},
  loadedCapture: 0,
  openMs: null,
  text: DEFAULT_QUERY,
  running: false,
  result: null,
  ran: null,
  error: null,
  follow: true,
  viewSelection: null,
  notice: null,

  async open() {
    if (get().status !== 'closed' && get().status !== 'error') return;
    const t0 = performance.now();
    set({ status: 'starting', line: 'Loading DuckDB…', error: null });
    try {
      await sql().start();
    } catch (e) {
      set({ status: 'error', line: `DuckDB could not start: ${(e as Error).message}` });
      return;
    }
    await reloadTables();
    if (get().status === 'ready') set({ openMs: performance.now() - t0 });
  },

  setText: (text) => set({ text }),

  async run(text) {
    const query = (text ?? get().text).trim();
    if (!query) return;
    if (text !== undefined) set({ text });
    // asked while another query runs (the selection's re-run, say) or the tables go in: run after
    // it, not dropped (Ctrl+Enter then did nothing, and said nothing)
    if (get().running || get().status === 'tables') {
      queued = query;
      return;
    }
    if (get().status !== 'ready') return;
    set({ running: true, error: null });
    try {
      const result = await sql().run(query, RESULT_CAP);
      set({ result, ran: query, running: false });
    } catch (e) {
      const message = (e as Error).message;
      set({ error: message === SQL_CANCELLED ? 'Cancelled.' : message, running: false, result: null, ran: query });
    }
    if (runQueued()) return;
    if (followLater) {
      followLater = false;
      void followSelection();
    }
  },

  async cancel() {
    if (!get().running) return;
    set({ line: 'Cancelling…' });
    try {
      const how = await sql().cancel();
      set({ line: readyLine(get().rows, how === 'restarted' ? ' (DuckDB restarted to stop the query)' : '') });
    } catch (e) {
      set({ status: 'error', line: `DuckDB could not be restarted after Cancel: ${(e as Error).message}` });
    }
  },

  setFollow(follow) {
    set({ follow });
    if (follow) void followSelection();
  },

  async selectStack(hash) {
    const stack = await ingestWorker()
      .stackByHash(hash)
      .catch(() => null);
    if (stack === null) {
      set({ notice: `stack ${hash} is not in the capture open now` });
      return;
    }
    set({ notice: null });
    stackIds.remember(stack, hash);
    useViewStore.getState().set({ stack });
  },
}));

/** The selection view brought up to the panes' selection; a query over it runs again. */
let followLater = false;

/** the last query asked for while another ran or the tables went in (SqlState.run) */
let queued: string | null = null;

/** Runs the query asked for meanwhile, if any; whether there was one. */
function runQueued(): boolean {
  const q = queued;
  queued = null;
  if (q === null) return false;
  void useSqlStore.getState().run(q);
  return true;
}

async function followSelection(): Promise<void> {
  const s = useSqlStore.getState();
  if (s.status !== 'ready' || !s.follow) return;
  // a view replaced under a running query would end it: wait until it is done
  if (s.running) {
    followLater = true;
    return;
  }
  const selection = selectionOf();
  if (sameSelection(s.viewSelection, selection)) return;
  useSqlStore.setState({ viewSelection: selection });
  try {
    for (const v of SELECTION_VIEWS) await sql().setView(v.view, selectionViewSql(selection, v.view, v.table));
  } catch (e) {
    useSqlStore.setState({ error: (e as Error).message });
    return;
  }
  const now = useSqlStore.getState();
  if (now.ran && /\bselection(_records)?\b/i.test(now.ran) && !now.running && now.error === null) void now.run(now.ran);
}

if (typeof window !== 'undefined') {
  // another capture: its tables replace the old ones (once DuckDB is open)
  useLoadStore.subscribe((l, prev) => {
    if (l.captureId === prev.captureId || l.overview === null) return;
    const s = useSqlStore.getState();
    if (s.status === 'ready' || (s.status === 'error' && s.engine)) void reloadTables();
  });
  useViewStore.subscribe((v, prev) => {
    if (v.range !== prev.range || v.generation !== prev.generation || v.cpus !== prev.cpus) void followSelection();
  });
}
