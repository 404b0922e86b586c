import { create } from 'zustand';
import type { ParsedStat } from '../core/formats/types.ts';
import type { Overview, Warning } from '../core/model/query-types.ts';
import type { Summary } from '../core/model/summary.ts';
import { CANCELLED, type LoadProgress, type NamedBlob } from '../workers/ingest-api.ts';
import { Comlink, startIngestWorker } from '../workers/ingest-client.ts';
import { useViewStore } from './view-store.ts';

export type LoadStatus = 'idle' | 'loading' | 'done' | 'cancelled' | 'error';

export interface LoadState {
  status: LoadStatus;
  /** names of the files of the current capture */
  files: string[];
  /** "sample" for the embedded capture, else "files" */
  source: 'sample' | 'files' | null;
  progress: LoadProgress | null;
  summary: Summary | null;
  overview: Overview | null;
  warnings: Warning[];
  stats: ParsedStat[];
  /** bumps with every capture loaded; queries are keyed by it so answers about an older one are dropped */
  captureId: number;
  error: string | null;
  elapsedMs: number | null;
  load(files: NamedBlob[], source: 'sample' | 'files'): Promise<void>;
  loadSample(): Promise<void>;
  cancel(): void;
}

let worker: ReturnType<typeof startIngestWorker> | null = null;
/** The worker that holds the loaded capture; query hooks (queries.ts) ask it too. */
export const ingestWorker = () => (worker ??= startIngestWorker());

/** Where the embedded capture lives (public/samples/, listed by its index.json). */
export const SAMPLE_BASE = `${import.meta.env.BASE_URL}samples/`;

export const useLoadStore = create<LoadState>((set, get) => ({
  status: 'idle',
  files: [],
  source: null,
  progress: null,
  summary: null,
  overview: null,
  warnings: [],
  stats: [],
  captureId: 0,
  error: null,
  elapsedMs: null,

  async load(files, source) {
    set({ status: 'loading', files: files.map((f) => f.name), source, progress: null, error: null });
    try {
      const result = await ingestWorker().ingest(
        files,
        Comlink.proxy((p: LoadProgress) => set({ progress: p })),
      );
      // the first capture is opened with the view the URL carries; a later one starts afresh
      if (get().captureId > 0) useViewStore.getState().reset();
      set({
        status: 'done',
        summary: result.summary,
        overview: result.overview,
        warnings: result.warnings,
        stats: result.stats,
        elapsedMs: result.elapsedMs,
        captureId: get().captureId + 1,
      });
    } catch (e) {
      const message = (e as Error).message;
      if (message.includes(CANCELLED)) set({ status: 'cancelled' });
      else set({ status: 'error', error: message });
    }
  },

  async loadSample() {
    set({ status: 'loading', files: ['samples/index.json'], source: 'sample', progress: null, error: null });
    try {
      const index = (await (await fetch(SAMPLE_BASE + 'index.json')).json()) as { files: string[] };
      const files = await Promise.all(
        index.files.map(async (name) => ({ name, blob: await (await fetch(SAMPLE_BASE + name)).blob() })),
      );
      await get().load(files, 'sample');
    } catch (e) {
      set({ status: 'error', error: `cannot load the sample: ${(e as Error).message}` });
    }
  },

  cancel() {
    if (get().status === 'loading') void ingestWorker().cancel();
  },
}));
