import type { LoadProgress, NamedBlob } from '../core/model/load.ts';
import type { Summary } from '../core/model/summary.ts';

export type { LoadProgress, NamedBlob };

export interface IngestResult {
  summary: Summary;
  /** milliseconds from first byte to result */
  elapsedMs: number;
}

/** The ingest worker's API, called through Comlink. */
export interface IngestApi {
  ingest(files: NamedBlob[], onProgress: (p: LoadProgress) => void): Promise<IngestResult>;
  /** stops the load in progress; its ingest() rejects with "cancelled" */
  cancel(): void;
}

export const CANCELLED = 'cancelled';
