import * as Comlink from 'comlink';
import { loadFiles } from '../core/model/load.ts';
import { summarize } from '../core/model/summary.ts';
import type { IngestApi, LoadProgress, NamedBlob } from './ingest-api.ts';

let cancelled = false;

const api: IngestApi = {
  async ingest(files: NamedBlob[], onProgress: (p: LoadProgress) => void) {
    cancelled = false;
    const started = performance.now();
    const capture = await loadFiles(files, { onProgress, isCancelled: () => cancelled });
    return { summary: summarize(capture), elapsedMs: performance.now() - started };
  },
  cancel() {
    cancelled = true;
  },
};

Comlink.expose(api);
