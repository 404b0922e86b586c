import * as Comlink from 'comlink';
import { Ingest } from '../core/model/ingest.ts';
import { summarize } from '../core/model/summary.ts';
import { CANCELLED, type IngestApi, type LoadProgress, type NamedBlob } from './ingest-api.ts';

let cancelled = false;
const PROGRESS_EVERY_MS = 50;

const api: IngestApi = {
  async ingest(files: NamedBlob[], onProgress: (p: LoadProgress) => void) {
    cancelled = false;
    const started = performance.now();
    const totalBytes = files.reduce((n, f) => n + f.blob.size, 0);
    let bytesRead = 0;
    let lastReport = 0;
    const report = (file: string, force = false) => {
      const now = performance.now();
      if (!force && now - lastReport < PROGRESS_EVERY_MS) return;
      lastReport = now;
      const secs = Math.max((now - started) / 1000, 1e-6);
      onProgress({ file, bytesRead, totalBytes, mbPerSecond: bytesRead / 1e6 / secs });
    };
    const ingest = new Ingest();
    for (const f of files) {
      const parser = ingest.open(f.name);
      const reader = f.blob.stream().getReader();
      for (;;) {
        const { done, value } = await reader.read();
        if (cancelled) {
          await reader.cancel();
          throw new Error(CANCELLED);
        }
        if (done) break;
        parser.push(value);
        bytesRead += value.length;
        report(f.name);
      }
      parser.end();
      report(f.name, true);
    }
    const summary = summarize(ingest.finish());
    return { summary, elapsedMs: performance.now() - started };
  },
  cancel() {
    cancelled = true;
  },
};

Comlink.expose(api);
