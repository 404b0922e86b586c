import * as Comlink from 'comlink';
import type { IngestApi } from './ingest-api.ts';

/** Starts the ingest worker and returns its Comlink proxy. */
export function startIngestWorker(): Comlink.Remote<IngestApi> {
  const worker = new Worker(new URL('./ingest.worker.ts', import.meta.url), { type: 'module', name: 'ingest' });
  return Comlink.wrap<IngestApi>(worker);
}

export { Comlink };
