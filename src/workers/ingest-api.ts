import type { Summary } from '../core/model/summary.ts';

/** Progress of a load, as the worker reports it. */
export interface LoadProgress {
  file: string;
  /** bytes read so far over all files */
  bytesRead: number;
  totalBytes: number;
  /** MB/s since the load started */
  mbPerSecond: number;
}

export interface IngestResult {
  summary: Summary;
  /** milliseconds from first byte to result */
  elapsedMs: number;
}

export interface NamedBlob {
  name: string;
  blob: Blob;
}

/** The ingest worker's API, called through Comlink. */
export interface IngestApi {
  ingest(files: NamedBlob[], onProgress: (p: LoadProgress) => void): Promise<IngestResult>;
  /** stops the load in progress; its ingest() rejects with "cancelled" */
  cancel(): void;
}

export const CANCELLED = 'cancelled';
