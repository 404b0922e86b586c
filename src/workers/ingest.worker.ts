import * as Comlink from 'comlink';
import { Explorer } from '../core/model/explorer.ts';
import { loadFiles } from '../core/model/load.ts';
import type { FlameResult, FlameTree } from '../core/model/query-types.ts';
import { summarize } from '../core/model/summary.ts';
import { NO_CAPTURE, type IngestApi, type LoadProgress, type NamedBlob } from './ingest-api.ts';

let cancelled = false;
/** the last capture loaded, as the query engine over it */
let explorer: Explorer | null = null;

const ex = (): Explorer => {
  if (!explorer) throw new Error(NO_CAPTURE);
  return explorer;
};

const treeBuffers = (t: FlameTree): ArrayBuffer[] =>
  [t.name, t.parent, t.depth, t.value, t.self, t.highlight].map((a) => a.buffer as ArrayBuffer);
/** distinct buffers only: transferring one twice throws */
const flameBuffers = (r: FlameResult): ArrayBuffer[] => [...new Set([...treeBuffers(r.tree), ...(r.callers ? treeBuffers(r.callers) : [])])];

const api: IngestApi = {
  async ingest(files: NamedBlob[], onProgress: (p: LoadProgress) => void) {
    cancelled = false;
    const started = performance.now();
    const capture = await loadFiles(files, { onProgress, isCancelled: () => cancelled });
    const summary = summarize(capture);
    explorer = new Explorer(capture);
    return {
      summary,
      overview: explorer.overview(),
      warnings: explorer.warnings(),
      stats: capture.stats,
      elapsedMs: performance.now() - started,
    };
  },
  cancel() {
    cancelled = true;
  },

  // large typed arrays are fresh per answer, so they are transferred, not copied
  timeline(req) {
    const r = ex().timeline(req);
    return Comlink.transfer(r, [...new Set([r.counts.buffer as ArrayBuffer, r.highlight.buffer as ArrayBuffer])]);
  },
  eventNear: (t, lane, lanes, tolerance, selection) => ex().eventNear(t, lane, lanes, tolerance, selection),
  topStacks: (req) => ex().topStacks(req),
  stackFrames: (stack) => ex().stackFrames(stack),
  stackHash: (stack) => ex().stackHash(stack),
  stackByHash: (hash) => ex().stackByHash(hash),
  replayStacks: (selection, limit) => ex().replayStacks(selection, limit),
  stackOccurrences(stack, selection) {
    const r = ex().stackOccurrences(stack, selection);
    return Comlink.transfer(r, [r.buffer as ArrayBuffer]);
  },
  flame(req) {
    const r = ex().flame(req);
    return Comlink.transfer(r, flameBuffers(r));
  },
  selectionSummary: (selection) => ex().selectionSummary(selection),
  generationDiff: (a, b) => ex().generationDiff(a, b),
  exportSelection: (kind, selection, opts) => ex().exportSelection(kind, selection, opts),
};

Comlink.expose(api);
