import { create } from 'zustand';
import type { Summary } from '../core/model/summary.ts';
import { CANCELLED, type LoadProgress, type NamedBlob } from '../workers/ingest-api.ts';
import { Comlink, startIngestWorker } from '../workers/ingest-client.ts';

export type LoadStatus = 'idle' | 'loading' | 'done' | 'cancelled' | 'error';

export interface LoadState {
  status: LoadStatus;
  /** names of the files of the current capture */
  files: string[];
  /** "sample" for the embedded capture, else "files" */
  source: 'sample' | 'files' | null;
  progress: LoadProgress | null;
  summary: Summary | null;
  error: string | null;
  elapsedMs: number | null;
  load(files: NamedBlob[], source: 'sample' | 'files'): Promise<void>;
  loadSample(): Promise<void>;
  cancel(): void;
}

let worker: ReturnType<typeof startIngestWorker> | null = null;
const ingestWorker = () => (worker ??= startIngestWorker());

/** Where the embedded capture lives (public/samples/, listed by its index.json). */
export const SAMPLE_BASE = `${import.meta.env.BASE_URL}samples/`;

export const useLoadStore = create<LoadState>((set, get) => ({
  status: 'idle',
  files: [],
  source: null,
  progress: null,
  summary: null,
  error: null,
  elapsedMs: null,

  async load(files, source) {
    set({ status: 'loading', files: files.map((f) => f.name), source, progress: null, error: null });
    try {
      const result = await ingestWorker().ingest(
        files,
        Comlink.proxy((p: LoadProgress) => set({ progress: p })),
      );
      set({ status: 'done', summary: result.summary, elapsedMs: result.elapsedMs });
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
